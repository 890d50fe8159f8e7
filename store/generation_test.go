package store

import (
	"context"
	"testing"
)

func TestGenerationChangesWithEveryWrite(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t, Options{})
	rx := mustCreate(t, s, "gen")
	steps := []struct {
		name  string
		write func() error
	}{
		{"switch off", func() error { return s.SetEnabled(ctx, rx.ID, false) }},
		{"pause a site", func() error { return s.PauseSite(ctx, "shop.test") }},
		{"resume it", func() error { return s.ResumeSite(ctx, "shop.test") }},
		{"save a version", func() error { _, err := s.SaveVersion(ctx, rx.ID, sampleFiles("1"), AuthorPerson, ""); return err }},
	}
	for _, st := range steps {
		before := s.Generation()
		if _, err := s.ListRemixlets(ctx); err != nil { // a read changes nothing
			t.Fatal(err)
		}
		if got := s.Generation(); got != before {
			t.Fatalf("before %s: a read changed the generation %d → %d", st.name, before, got)
		}
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := s.Generation(); got == before {
			t.Errorf("%s: generation still %d, want a change", st.name, got)
		}
	}
}
