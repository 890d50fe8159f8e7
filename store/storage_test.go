package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestStorage(t *testing.T) {
	const quota = 100
	s, _ := openTestStore(t, Options{StorageQuota: quota})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	other := mustCreate(t, s, "other")
	mustOK(t, "StorageSet other", s.StorageSet(ctx, other.ID, "secret", `"other's"`))

	tests := []struct {
		name    string
		key     string
		value   string
		wantErr error
	}{
		{"set", "a", `"1"`, nil},
		{"overwrite", "a", `{"n":2}`, nil},
		{"bytes as given", "raw", "\"\xff\"", nil},
		{"empty key", "", `1`, ErrInvalid},
		{"key at limit", strings.Repeat("k", MaxStorageKey), `1`, ErrQuotaExceeded}, // 513 bytes > 100
		{"key too long", strings.Repeat("k", MaxStorageKey+1), `1`, ErrInvalid},
		{"up to the quota", "fill", strings.Repeat("x", quota-len("a")-len(`{"n":2}`)-len("raw")-len("\"\xff\"")-len("fill")), nil},
		{"one byte over", "z", "", ErrQuotaExceeded},
		{"shrinking a key's value fits", "fill", "0", nil},
		{"unknown remixlet", "a", "1", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := r.ID
			if tt.name == "unknown remixlet" {
				id = "rx_nope"
			}
			err := s.StorageSet(ctx, id, tt.key, tt.value)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("StorageSet(%q) error = %v, want %v", tt.key, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got, ok, err := s.StorageGet(ctx, id, tt.key)
			if err != nil || !ok || got != tt.value {
				t.Errorf("StorageGet(%q) = %q, %v, %v; want %q", tt.key, got, ok, err, tt.value)
			}
		})
	}

	var qe *QuotaError
	err := s.StorageSet(ctx, r.ID, "big", strings.Repeat("x", 200))
	if !errors.As(err, &qe) || qe.Limit != quota || qe.Used <= quota {
		t.Errorf("StorageSet over quota = %v, want a QuotaError naming used > %d and limit %d", err, quota, quota)
	} else if !strings.Contains(err.Error(), "of 100") {
		t.Errorf("QuotaError message %q does not name the limit", err)
	}

	keys, err := s.StorageKeys(ctx, r.ID)
	if err != nil || strings.Join(keys, ",") != "a,fill,raw" {
		t.Errorf("StorageKeys = %q, %v; want [a fill raw] (never another remixlet's)", keys, err)
	}
	if _, ok, _ := s.StorageGet(ctx, r.ID, "secret"); ok {
		t.Error("StorageGet sees another remixlet's key")
	}
	used, limit, err := s.StorageUsage(ctx, r.ID)
	if wantUsed := int64(len("a") + len(`{"n":2}`) + len("raw") + len("\"\xff\"") + len("fill0")); err != nil || used != wantUsed || limit != quota {
		t.Errorf("StorageUsage = %d, %d, %v; want %d, %d", used, limit, err, wantUsed, quota)
	}

	mustOK(t, "StorageDelete", s.StorageDelete(ctx, r.ID, "a"))
	mustOK(t, "StorageDelete missing", s.StorageDelete(ctx, r.ID, "never"))
	mustOK(t, "StorageDelete other's key through r", s.StorageDelete(ctx, r.ID, "secret"))
	if _, ok, _ := s.StorageGet(ctx, r.ID, "a"); ok {
		t.Error("StorageGet after StorageDelete found the key")
	}
	if got, ok, _ := s.StorageGet(ctx, other.ID, "secret"); !ok || got != `"other's"` {
		t.Errorf("other's key after r deleted a key of that name = %q, %v; want kept", got, ok)
	}
}
