package fetch

import (
	"testing"
	"time"
)

// A politeness model restored in a new process holds every host at least
// as long as the old one did: Retry-After blocks, Crawl-delays and the
// spacing after the last request all survive, and Restarted spaces the
// hosts whose last request was not saved.
func TestPolitenessSurvivesRestart(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := PolitenessConfig{Delay: time.Second, DelayFactor: -1, Rand: func() float64 { return 0.5 }}
	old := NewPoliteness(cfg)
	old.Release("blocked.test", t0, t0, Outcome{Status: 429, RetryAfter: 2 * time.Minute, HasRetryAfter: true})
	old.SetCrawlDelay("slow.test", 10*time.Second)
	old.Release("slow.test", t0, t0, Outcome{Status: 200})
	old.Release("plain.test", t0, t0, Outcome{Status: 200})
	old.Release("idle.test", t0.Add(-time.Hour), t0.Add(-time.Hour), Outcome{Status: 200})

	now := t0.Add(100 * time.Millisecond) // the process dies and restarts
	states := old.Export(now)
	if len(states) != 3 {
		t.Fatalf("exported %d hosts, want 3 (blocked, slow, plain; not idle): %+v", len(states), states)
	}
	restored := NewPoliteness(cfg)
	restored.Import(states, now)
	restored.Restarted(now)
	for host, want := range map[string]time.Time{
		"blocked.test": t0.Add(2 * time.Minute),
		"slow.test":    now.Add(10 * time.Second),
		"plain.test":   now.Add(time.Second),
		"idle.test":    now.Add(time.Second), // not saved: spaced from the restart
		"new.test":     now.Add(time.Second),
	} {
		if got := restored.ReadyAt(host, now); got.Before(want) {
			t.Errorf("%s ready at %v after the restart, want no sooner than %v", host, got.Sub(t0), want.Sub(t0))
		}
	}
	// Import never makes a host ready sooner than the model holds it.
	restored.Import([]HostState{{Host: "blocked.test"}}, now)
	if got := restored.ReadyAt("blocked.test", now); got.Before(t0.Add(2 * time.Minute)) {
		t.Errorf("an empty import shortened a block to %v", got.Sub(t0))
	}
}

// A LastEnd after the importing process's now, as a damaged record or a
// clock set back gives, spaces the host from now, not from that date.
func TestImportBoundsLastEnd(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := NewPoliteness(PolitenessConfig{Delay: time.Second, DelayFactor: -1, Rand: func() float64 { return 0.5 }})
	p.Import([]HostState{
		{Host: "future.test", LastEnd: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Host: "blocked.test", BlockedUntil: now.Add(48 * time.Hour)},
	}, now)
	if got := p.ReadyAt("future.test", now); !got.Equal(now.Add(time.Second)) {
		t.Errorf("future.test ready at %v, want its delay after now (%v)", got, now.Add(time.Second))
	}
	if got := p.ReadyAt("blocked.test", now); !got.Equal(now.Add(48 * time.Hour)) {
		t.Errorf("blocked.test ready at %v, want its block kept (%v)", got, now.Add(48*time.Hour))
	}
}
