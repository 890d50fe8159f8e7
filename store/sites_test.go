package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"plain", "example.com", "example.com", false},
		{"upper case", "WWW.Example.COM", "www.example.com", false},
		{"port", "example.com:8443", "example.com", false},
		{"trailing dot", "example.com.", "example.com", false},
		{"spaces around", "  example.com ", "example.com", false},
		{"ipv4 with port", "127.0.0.1:80", "127.0.0.1", false},
		{"ipv6 with port", "[::1]:443", "::1", false},
		{"ipv6 bracketed", "[::1]", "::1", false},
		{"empty", "", "", true},
		{"scheme", "https://example.com", "", true},
		{"path", "example.com/x", "", true},
		{"user info", "me@example.com", "", true},
		{"only a port", ":80", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeHost(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NormalizeHost(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("NormalizeHost(%q) error = %v, want ErrInvalid", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("NormalizeHost(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPausedSites(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	mustOK(t, "PauseSite", s.PauseSite(ctx, "News.Example.com:443"))
	mustOK(t, "PauseSite again", s.PauseSite(ctx, "news.example.com"))
	mustOK(t, "PauseSite", s.PauseSite(ctx, "b.test"))

	tests := []struct {
		host string
		want bool
	}{
		{"news.example.com", true},
		{"NEWS.EXAMPLE.COM:8080", true},
		{"example.com", false},
		{"sub.news.example.com", false},
		{"b.test", true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, err := s.IsSitePaused(ctx, tt.host)
			if err != nil || got != tt.want {
				t.Errorf("IsSitePaused(%q) = %v, %v; want %v", tt.host, got, err, tt.want)
			}
		})
	}
	hosts, err := s.PausedSites(ctx)
	if err != nil || strings.Join(hosts, ",") != "b.test,news.example.com" {
		t.Errorf("PausedSites = %v, %v; want [b.test news.example.com]", hosts, err)
	}

	mustOK(t, "ResumeSite", s.ResumeSite(ctx, "news.EXAMPLE.com"))
	mustOK(t, "ResumeSite not paused", s.ResumeSite(ctx, "never.test"))
	if got, _ := s.IsSitePaused(ctx, "news.example.com"); got {
		t.Error("IsSitePaused after ResumeSite = true, want false")
	}
	if err := s.PauseSite(ctx, "https://x.test/"); !errors.Is(err, ErrInvalid) {
		t.Errorf("PauseSite(URL) = %v, want ErrInvalid", err)
	}
}
