package idle

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// waitUntil polls cond; the minute is a bound for a stuck test, not a
// timing assertion.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (g *Gate) state() (polling bool, sleepers int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.polling, g.sleepers
}

// store is a fake shared store: polls find work while work > 0, and the
// test records which waiter asked.
type store struct {
	mu    sync.Mutex
	work  int
	polls map[int]int // polls per waiter since the last reset
}

func (s *store) poll(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls[id]++
	if s.work > 0 {
		s.work--
		return true
	}
	return false
}

func (s *store) pollers() (ids, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.polls {
		ids++
		total += n
	}
	return ids, total
}

func (s *store) reset() {
	s.mu.Lock()
	s.polls = map[int]int{}
	s.mu.Unlock()
}

func (s *store) add(n int) {
	s.mu.Lock()
	s.work += n
	s.mu.Unlock()
}

// waiter is a Next loop on the fake store.
func waiter(ctx context.Context, g *Gate, s *store, id int, every time.Duration, got *atomic.Int64) {
	for {
		turn := g.Enter()
		for !s.poll(id) {
			if !turn.Sleep(ctx, nil, every) {
				turn.Leave()
				return
			}
		}
		turn.Leave()
		got.Add(1)
	}
}

// TestOnePollerWhileIdle checks that of eight idle waiters only one keeps
// asking the store, that work found by it wakes the others, and that Wake
// and the end of the context reach every sleeper.
func TestOnePollerWhileIdle(t *testing.T) {
	var g Gate
	s := &store{polls: map[int]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Int64
	var wg sync.WaitGroup
	for id := range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); waiter(ctx, &g, s, id, time.Millisecond, &got) }()
	}
	waitUntil(t, "eight sleepers", func() bool { _, n := g.state(); return n == 8 })
	if polling, _ := g.state(); !polling {
		t.Fatal("eight idle waiters and no poller")
	}

	// From here on only the poller asks, however long the store stays
	// empty.
	s.reset()
	waitUntil(t, "50 idle polls", func() bool { _, total := s.pollers(); return total >= 50 })
	if ids, total := s.pollers(); ids != 1 {
		t.Fatalf("%d polls from %d waiters while idle; want one waiter", total, ids)
	}

	// Work appears: the poller takes one item and wakes the others, who
	// take the rest.
	s.add(5)
	waitUntil(t, "the work taken", func() bool { return got.Load() == 5 })
	waitUntil(t, "eight sleepers again", func() bool { _, n := g.state(); return n == 8 })
	// A wake-up the last taker gave while others were polling is counted,
	// not lost (see Gate), so the sleepers may poll once more each before
	// the gate is idle again: let that round pass, then count.
	s.reset()
	waitUntil(t, "50 polls after the work", func() bool { _, total := s.pollers(); return total >= 50 })
	s.reset()
	waitUntil(t, "50 idle polls", func() bool { _, total := s.pollers(); return total >= 50 })
	if ids, _ := s.pollers(); ids != 1 {
		t.Fatalf("after the work: %d waiters polling while idle, want one", ids)
	}

	cancel()
	wg.Wait()
	if polling, n := g.state(); polling || n != 0 {
		t.Fatalf("after the end: polling %v, %d sleepers", polling, n)
	}
}

// TestWakeReachesSleepers checks that Wake makes every sleeper, the
// followers without timers included, poll again, and that a closed
// channel ends Sleep.
func TestWakeReachesSleepers(t *testing.T) {
	var g Gate
	closed := make(chan struct{})
	var polls atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turn := g.Enter()
			defer turn.Leave()
			for {
				polls.Add(1)
				if !turn.Sleep(context.Background(), closed, time.Hour) {
					return
				}
			}
		}()
	}
	waitUntil(t, "four sleepers", func() bool { _, n := g.state(); return n == 4 })
	if p := polls.Load(); p != 4 {
		t.Fatalf("%d polls before Wake, want 4", p)
	}
	g.Wake()
	waitUntil(t, "a poll by every sleeper", func() bool { return polls.Load() == 8 })
	waitUntil(t, "four sleepers again", func() bool { _, n := g.state(); return n == 4 })
	close(closed)
	wg.Wait()
}

func TestBackgroundStartsEachTaskOnceAndStopWaits(t *testing.T) {
	var b Background
	var task Task
	release := make(chan struct{})
	var runs, ended atomic.Int32
	run := func() {
		runs.Add(1)
		<-release
		ended.Add(1)
	}
	for range 3 {
		b.Start(&task, run)
	}
	if !task.Started() {
		t.Fatal("task not started")
	}
	stopped := make(chan struct{})
	go func() {
		b.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("Stop returned while the task ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-stopped
	if runs.Load() != 1 || ended.Load() != 1 {
		t.Fatalf("runs %d, ended %d: want 1 and 1", runs.Load(), ended.Load())
	}
	var late Task
	b.Start(&late, func() { t.Error("a task started after Stop") })
	if late.Started() {
		t.Error("a task marked started after Stop")
	}
}

func TestBackoffDoublesUpToMaxAndResets(t *testing.T) {
	b := Backoff{Min: time.Millisecond, Max: 4 * time.Millisecond}
	var got []time.Duration
	for range 4 {
		got = append(got, b.Current())
		if !b.Wait(context.Background()) {
			t.Fatal("Wait returned false without a cancelled context")
		}
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("pauses %v, want %v", got, want)
	}
	b.Reset()
	if b.Current() != time.Millisecond {
		t.Fatalf("after Reset the pause is %v, want %v", b.Current(), time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := Backoff{Min: time.Hour, Max: time.Hour}
	if long.Wait(ctx) {
		t.Fatal("Wait returned true with a cancelled context")
	}
}

func TestListeningWakesSleepersAndCounts(t *testing.T) {
	var g Gate
	turn := g.Enter()
	defer turn.Leave()
	woke := make(chan bool)
	go func() { woke <- turn.Sleep(context.Background(), nil, time.Hour) }()
	waitUntil(t, "the turn sleeps", func() bool { return g.Sleeping() == 1 })
	g.Listening()
	if !<-woke {
		t.Fatal("Sleep returned false")
	}
	if g.Listens() != 1 {
		t.Fatalf("Listens %d, want 1", g.Listens())
	}
}

// TestWakeDuringPollIsNotLost checks that a Wake that comes while a
// waiting Next is asking the store (an Add committed after the poll's
// query read the store, or the listener's notification of it arriving
// then) makes Next ask again at once, instead of sleeping a whole
// PollInterval with work ready.
func TestWakeDuringPollIsNotLost(t *testing.T) {
	var g Gate
	var calls atomic.Int32
	src := Source{
		Ctx: context.Background(), OpTimeout: time.Minute, PollInterval: time.Hour, Now: time.Now,
		LeaseAt: func(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
			if calls.Add(1) == 1 {
				// The work appears, and its wake-up arrives, after
				// this poll read the store: it finds nothing.
				g.Wake()
				return nil, time.Time{}, nil
			}
			return []*frontier.Lease{{URL: "http://a.test/"}}, time.Time{}, nil
		},
		Unavailable: errors.New("unavailable"), OnUnavailable: func(error) {},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := g.Next(ctx, src)
	if err != nil {
		t.Fatalf("Next after a Wake during its poll: %v (the wake-up was lost; it sleeps a PollInterval)", err)
	}
	if l == nil || calls.Load() != 2 {
		t.Fatalf("Next returned %v after %d polls, want the lease after 2", l, calls.Load())
	}
}

// TestListeningDuringPollIsNotLost is TestWakeDuringPollIsNotLost for the
// listener's (re)start, which may follow Adds no one heard.
func TestListeningDuringPollIsNotLost(t *testing.T) {
	var g Gate
	turn := g.Enter()
	defer turn.Leave()
	g.Listening() // during the turn's first poll
	woke := make(chan bool, 1)
	go func() { woke <- turn.Sleep(context.Background(), nil, time.Hour) }()
	select {
	case ok := <-woke:
		if !ok {
			t.Fatal("Sleep returned false")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sleep after a Listening during the poll slept on: the wake-up was lost")
	}
}
