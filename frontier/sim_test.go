package frontier

import (
	"container/heap"
	"fmt"
	"testing"
	"time"
)

// hostDelays is a Politeness with a delay per host.
type hostDelays map[string]time.Duration

func (d hostDelays) ReadyAt(host string, finished time.Time) time.Time {
	return finished.Add(d[host])
}

type fetchEvent struct {
	at time.Time
	l  *Lease
}

type eventHeap []fetchEvent

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(fetchEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestPolitenessSimulation crawls a simulated web of thousands of hosts, some
// with long delays, on a fake clock with a pool of workers. The frontier must
// never lease a host before its delay has passed, must never leave a worker
// idle while some host may be contacted, and must finish within 5% of the
// politeness lower bound: no schedule can finish before the slowest host's
// own fetches and delays are done, nor before the workers have done all the
// fetching.
func TestPolitenessSimulation(t *testing.T) {
	const (
		hosts   = 3000
		workers = 1000
	)
	delays := hostDelays{}
	type simHost struct {
		name     string
		urls     int
		fetch    time.Duration
		delay    time.Duration
		queued   int
		busy     bool
		lastDone time.Time
		started  bool
	}
	sim := map[string]*simHost{}
	f := newTest(t, Config{Politeness: delays, LeaseTTL: time.Hour})
	var lowerBound, totalWork time.Duration
	for i := 0; i < hosts; i++ {
		h := &simHost{
			name:  fmt.Sprintf("h%04d.test", i),
			urls:  1 + (i*7919)%20,
			fetch: time.Duration(50+(i*104729)%450) * time.Millisecond,
			delay: time.Second,
		}
		if i%20 == 0 { // 5% of hosts ask for Crawl-delay: 10
			h.delay = 10 * time.Second
			h.urls = 30
		}
		if i%97 == 0 { // a few very slow ones
			h.delay = 30 * time.Second
			h.urls = 12
		}
		h.queued = h.urls
		delays[h.name] = h.delay
		sim[h.name] = h
		// A host alone needs all its fetches and the delays between them.
		hb := time.Duration(h.urls)*h.fetch + time.Duration(h.urls-1)*h.delay
		lowerBound = max(lowerBound, hb)
		totalWork += time.Duration(h.urls) * h.fetch
		var es []Entry
		for u := 0; u < h.urls; u++ {
			es = append(es, Entry{URL: fmt.Sprintf("http://%s/%d", h.name, u), Host: h.name, Depth: u % 3})
		}
		mustAdd(t, f, t0, es...)
	}
	lowerBound = max(lowerBound, totalWork/workers)

	now := t0
	idle := workers
	var events, contactable eventHeap
	for name := range sim {
		heap.Push(&contactable, fetchEvent{at: t0, l: &Lease{Host: name}})
	}
	leases := 0
	for {
		// Hand every idle worker a lease while there are any.
		var wake time.Time
		for idle > 0 {
			l, w, err := f.NextAt(now)
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				wake = w
				break
			}
			h := sim[l.Host]
			if h.busy {
				t.Fatalf("%s leased while its previous lease is out", h.name)
			}
			if h.started && now.Before(h.lastDone.Add(h.delay)) {
				t.Fatalf("%s leased at %v, %v before its delay ended", h.name, now.Sub(t0), h.lastDone.Add(h.delay).Sub(now))
			}
			h.busy, h.started = true, true
			h.queued--
			idle--
			leases++
			heap.Push(&events, fetchEvent{at: now.Add(h.fetch), l: l})
		}
		if idle > 0 {
			// Workers are idle: no host may be contactable now. The
			// heap holds every host from the time it may be contacted
			// until it is leased.
			for len(contactable) > 0 && !contactable[0].at.After(now) {
				c := heap.Pop(&contactable).(fetchEvent)
				h := sim[c.l.Host]
				if h.queued > 0 && !h.busy && !now.Before(h.lastDone.Add(h.delay)) {
					t.Fatalf("%d workers idle at %v while %s is ready with %d URLs", idle, now.Sub(t0), h.name, h.queued)
				}
			}
		}
		if len(events) == 0 && wake.IsZero() {
			break
		}
		next := wake
		if len(events) > 0 && (next.IsZero() || events[0].at.Before(next)) {
			next = events[0].at
		}
		now = next
		for len(events) > 0 && !events[0].at.After(now) {
			ev := heap.Pop(&events).(fetchEvent)
			mustDone(t, f, ev.at, ev.l, Success(0))
			h := sim[ev.l.Host]
			h.busy = false
			h.lastDone = ev.at
			idle++
			if h.queued > 0 {
				heap.Push(&contactable, fetchEvent{at: ev.at.Add(h.delay), l: &Lease{Host: h.name}})
			}
		}
	}
	var want int
	for _, h := range sim {
		want += h.urls
		if h.queued != 0 {
			t.Fatalf("%s has %d URLs never leased", h.name, h.queued)
		}
	}
	if leases != want {
		t.Fatalf("%d leases for %d URLs", leases, want)
	}
	// The crawl ends with the last fetch; the idle hosts' trailing delays
	// do not count.
	var end time.Time
	for _, h := range sim {
		if h.lastDone.After(end) {
			end = h.lastDone
		}
	}
	total := end.Sub(t0)
	ratio := float64(total) / float64(lowerBound)
	t.Logf("%d URLs on %d hosts with %d workers: %v simulated, lower bound %v (ratio %.4f)", want, hosts, workers, total, lowerBound, ratio)
	if ratio > 1.05 {
		t.Fatalf("simulated crawl took %v, more than 5%% over the politeness lower bound %v", total, lowerBound)
	}
}
