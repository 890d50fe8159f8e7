package page

// TokenID names a page token without being one: the part that identifies it (its MAC). The
// agent's navigation guard binds a lease on a document to the session its token opens
// (chat/navguard.go), not to whichever page of the same address connects first.
func TokenID(token string) string { return tokenKey(token) }

// TokenID is the TokenID of the token the session was opened with.
func (s *Session) TokenID() string { return s.tokenKey }
