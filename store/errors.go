package store

import (
	"errors"
	"fmt"
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound         = errors.New("not found")
	ErrDuplicateName    = errors.New("a remixlet with this name already exists")
	ErrInvalid          = errors.New("invalid argument")
	ErrNewerSchema      = errors.New("database made by a newer remixproxy; upgrade")
	ErrApprovalRequired = errors.New("activation needs the person's approval")
	ErrApprovalExpired  = errors.New("approval expired")
	ErrApprovalDeclined = errors.New("approval was declined")
	ErrApprovalUsed     = errors.New("approval was already used")
	ErrApprovalPending  = errors.New("approval is still waiting for the person")
	ErrDigestMismatch   = errors.New("version digest does not match the approved digest")
	ErrBaseChanged      = errors.New("another version became active after the person was asked")
	ErrQuotaExceeded    = errors.New("storage quota exceeded")
	ErrCorrupt          = errors.New("stored data is corrupt")
)

// ApprovalRequiredError is returned by Activate when the change needs the person's
// approval. It matches ErrApprovalRequired with errors.Is.
type ApprovalRequiredError struct {
	VersionID int64
	Reason    string
}

func (e *ApprovalRequiredError) Error() string {
	if e.Reason == "" {
		return ErrApprovalRequired.Error()
	}
	return fmt.Sprintf("%v: %s", ErrApprovalRequired, e.Reason)
}

func (e *ApprovalRequiredError) Is(target error) bool { return target == ErrApprovalRequired }

// QuotaError is returned when an rmx.storage write would exceed the quota. It matches
// ErrQuotaExceeded with errors.Is.
type QuotaError struct {
	Used  int64 // bytes the remixlet's storage would use after the write
	Limit int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%v: would use %d bytes of %d", ErrQuotaExceeded, e.Used, e.Limit)
}

func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }
