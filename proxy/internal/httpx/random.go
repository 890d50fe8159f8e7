package httpx

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// RandomID is a fresh random identifier (128 bits, base64url): page sessions and their panel
// tokens, the chat's cards and items.
func RandomID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("reading random bytes: %v", err)) // the OS random source never fails on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
