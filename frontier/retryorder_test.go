package frontier

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRetryOrder runs scripts against one host and checks the order in
// which its URLs are leased. A URL retried after a failure has already had
// its turn: when its backoff is over it queues behind the URLs of its band
// that never failed, as if added then, instead of jumping to the head and
// being fetched (and failing) again before them. Recrawls and released
// leases still go to the head. Each script runs in memory and with a Store,
// with a window that holds the whole band and with one that does not.
//
// Commands, one per line (URLs are paths on h.test; time is since t0):
//
//	add p...          queue URLs at depth 0 (band 0)
//	add1 p...         queue URLs at depth 1 (band 1)
//	at 10s            move the clock
//	next p            the next lease must be p
//	none              there must be no lease
//	done p            settle p's lease as a success
//	retry p           settle it as a retry (RetryBase is 10 s)
//	recrawl p 10s     settle it as a success to be fetched again after 10 s
//	release p         give the lease back unsettled
func TestRetryOrder(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"a retry goes behind the URLs that never failed", `
			add a b c
			next a
			retry a
			at 10s
			next b
			done b
			next c
			done c
			next a
			done a
			none`},
		{"behind those still in the store too", `
			add a b c d e
			next a
			retry a
			at 10s
			next b
			done b
			next c
			done c
			next d
			done d
			next e
			done e
			next a
			done a
			none`},
		{"retries come back in the order they came due", `
			add a b c d
			next a
			retry a
			at 1s
			next b
			retry b
			at 11s
			next c
			done c
			next d
			done d
			next a
			done a
			next b
			done b
			none`},
		{"a retry stays ahead of worse bands", `
			add a b
			add1 x y
			next a
			retry a
			at 10s
			next b
			done b
			next a
			done a
			next x
			done x
			next y
			done y
			none`},
		{"a second retry goes to the tail again", `
			add a b
			next a
			retry a
			at 10s
			next b
			done b
			next a
			retry a
			add c d
			at 30s
			next c
			done c
			next d
			done d
			next a
			done a
			none`},
		{"a recrawl goes to the head", `
			add a b c
			next a
			recrawl a 10s
			at 10s
			next a
			done a
			next b
			done b
			next c
			done c
			none`},
		{"a released lease goes back to the head", `
			add a b
			next a
			release a
			next a
			done a
			next b
			done b
			none`},
	} {
		for _, mode := range []struct {
			name   string
			store  bool
			window int
		}{{"memory", false, 0}, {"store", true, 8}, {"store window 2", true, 2}} {
			t.Run(c.name+"/"+mode.name, func(t *testing.T) {
				opts := Config{Politeness: FixedDelay(0), RetryBase: 10 * time.Second, Window: mode.window}
				if mode.store {
					opts.Store = NewMemoryStore()
				}
				runRetryScript(t, newTest(t, opts), c.script)
			})
		}
	}
}

func runRetryScript(t *testing.T, f *Frontier, script string) {
	t.Helper()
	now := t0
	leases := map[string]*Lease{}
	for i, line := range strings.Split(strings.TrimSpace(script), "\n") {
		w := strings.Fields(line)
		where := fmt.Sprintf("line %d %q", i+1, strings.TrimSpace(line))
		u := func(p string) string { return "http://h.test/" + p }
		lease := func() *Lease {
			l := leases[w[1]]
			if l == nil {
				t.Fatalf("%s: %s is not leased", where, w[1])
			}
			delete(leases, w[1])
			return l
		}
		var err error
		switch w[0] {
		case "add", "add1":
			var es []Entry
			for _, p := range w[1:] {
				es = append(es, Entry{URL: u(p), Depth: len(w[0]) - 3})
			}
			err = f.AddAt(now, es...)
		case "at":
			d, perr := time.ParseDuration(w[1])
			if perr != nil {
				t.Fatalf("%s: %v", where, perr)
			}
			now = t0.Add(d)
		case "next":
			l, _, nerr := f.NextAt(now)
			switch {
			case nerr != nil:
				err = nerr
			case l == nil:
				t.Fatalf("%s: no lease", where)
			case l.URL != u(w[1]):
				t.Fatalf("%s: leased %s", where, l.URL)
			}
			leases[w[1]] = l
		case "none":
			if l, _, nerr := f.NextAt(now); nerr != nil || l != nil {
				t.Fatalf("%s: leased %v, err %v", where, l, nerr)
			}
		case "done":
			_, err = f.DoneAt(now, lease(), Success(0))
		case "retry":
			_, err = f.DoneAt(now, lease(), Retry(0))
		case "recrawl":
			d, perr := time.ParseDuration(w[2])
			if perr != nil {
				t.Fatalf("%s: %v", where, perr)
			}
			_, err = f.DoneAt(now, lease(), Outcome{Kind: OutcomeSuccess, RecrawlAt: now.Add(d)})
		case "release":
			err = f.ReleaseAt(now, lease())
		default:
			t.Fatalf("%s: unknown command", where)
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
}
