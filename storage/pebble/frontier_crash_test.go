package pebble

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

const (
	crashDirEnv   = "CRAWLKIT_FRONTIER_CRASH_DIR"
	crashRoundEnv = "CRAWLKIT_FRONTIER_CRASH_ROUND"
)

// TestFrontierCrashChild is the child process of TestFrontierCrash; it does
// nothing unless started by it. It adds, leases and settles URLs on a durable
// frontier as fast as it can and prints one line per acknowledged operation,
// strictly after the acknowledgement:
//
//	A url     Add returned nil
//	s n url   about to settle attempt n of url with success
//	S n url   the success was acknowledged
//	r n url   about to settle attempt n of url with a retry
//	R n url   the retry was acknowledged
//
// until the parent kills it. Lines of different workers can interleave out
// of order (a retried URL can be leased, settled and reported by another
// worker before the retry's acknowledgement is printed), so the attempt
// number orders the events of one URL.
func TestFrontierCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child of TestFrontierCrash")
	}
	round := os.Getenv(crashRoundEnv)
	db, err := Open(dir, Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f, err := frontier.New(frontier.Config{
		Store:       db.Frontier(),
		Politeness:  frontier.FixedDelay(0),
		LeaseTTL:    time.Hour,
		MaxAttempts: 1000,
		RetryBase:   time.Millisecond,
		RetryMax:    time.Millisecond,
		Window:      4,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var outMu sync.Mutex
	say := func(kind byte, attempt int, url string) {
		outMu.Lock()
		defer outMu.Unlock()
		line := fmt.Sprintf("%c %s\n", kind, url)
		if kind != 'A' {
			line = fmt.Sprintf("%c %d %s\n", kind, attempt, url)
		}
		// One write per line: a kill cuts at most the line being written.
		if _, err := os.Stdout.WriteString(line); err != nil {
			os.Exit(3)
		}
	}
	var settledMu sync.Mutex
	settled := map[string]bool{}
	var wg sync.WaitGroup
	for a := 0; a < 2; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				var es []frontier.Entry
				for j := 0; j < 1+k%7; j++ {
					es = append(es, frontier.Entry{URL: fmt.Sprintf("http://h%d.test/r%s/a%d/%d-%d", (k+j)%13, round, a, k, j)})
				}
				if err := f.Add(es...); err != nil {
					fmt.Fprintln(os.Stderr, "add:", err)
					os.Exit(4)
				}
				for _, e := range es {
					say('A', 0, e.URL)
				}
			}
		}()
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, err := f.Next(context.Background())
				if err != nil {
					fmt.Fprintln(os.Stderr, "next:", err)
					os.Exit(5)
				}
				settledMu.Lock()
				again := settled[l.URL]
				settledMu.Unlock()
				if again {
					fmt.Fprintln(os.Stderr, "leased after its success was acknowledged:", l.URL)
					os.Exit(6)
				}
				h := fnv.New32a()
				h.Write([]byte(l.URL))
				retry := (h.Sum32()+uint32(l.Attempt))%3 == 0 && l.Attempt < 3
				if retry {
					say('r', l.Attempt, l.URL)
					_, err = f.Done(l, frontier.Retry(0))
				} else {
					say('s', l.Attempt, l.URL)
					_, err = f.Done(l, frontier.Success(0))
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "done:", err)
					os.Exit(7)
				}
				if retry {
					say('R', l.Attempt, l.URL)
				} else {
					settledMu.Lock()
					settled[l.URL] = true
					settledMu.Unlock()
					say('S', l.Attempt, l.URL)
				}
			}
		}()
	}
	wg.Wait()
}

// TestFrontierCrash kills a child process that is adding and settling URLs on
// a durable frontier with SIGKILL at random points, then reopens the store
// and checks that no acknowledged URL was lost and no URL whose settlement
// was acknowledged came back. It repeats on the same directory until its time
// budget is spent.
func TestFrontierCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	budget := 40 * time.Second
	dir := filepath.Join(t.TempDir(), "db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	start := time.Now()
	rounds, totalAdds, totalSettled := 0, 0, 0
	for rounds < 100 && (rounds < 5 || time.Since(start) < budget) {
		adds, settles := crashRound(t, dir, rounds, rng.IntN(4000)+20)
		totalAdds += adds
		totalSettled += settles
		rounds++
	}
	t.Logf("%d rounds, %d acknowledged adds, %d acknowledged successes, %v", rounds, totalAdds, totalSettled, time.Since(start).Round(time.Millisecond))
}

// crashRound runs one child, kills it after kill output lines, and checks
// the store. It returns the acknowledged adds and successes it saw.
func crashRound(t *testing.T, dir string, round, kill int) (int, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFrontierCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("%s=%d", crashRoundEnv, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// For every URL: whether its add was acknowledged, and the latest
	// lease event (the one with the highest attempt number).
	type urlState struct {
		added   bool
		attempt int  // of ev; -1: never leased
		ev      byte // 's', 'S', 'r', 'R'
	}
	state := map[string]*urlState{}
	get := func(url string) *urlState {
		st := state[url]
		if st == nil {
			st = &urlState{attempt: -1}
			state[url] = st
		}
		return st
	}
	sc := bufio.NewScanner(out)
	lines, killed := 0, false
	adds, successes := 0, 0
	for sc.Scan() {
		line := sc.Text()
		var kind byte
		var attempt int
		var url string
		if strings.HasPrefix(line, "A ") {
			kind, url = 'A', line[2:]
		} else if n, err := fmt.Sscanf(line, "%c %d %s", &kind, &attempt, &url); n != 3 || err != nil {
			continue // cut by the kill
		}
		if !strings.Contains(url, fmt.Sprintf("/r%d/", round)) {
			t.Fatalf("round %d: child reported a URL of another round: %q", round, line)
		}
		st := get(url)
		switch kind {
		case 'A':
			if st.added {
				t.Fatalf("round %d: %s added twice", round, url)
			}
			st.added = true
			adds++
		case 's', 'S', 'r', 'R':
			if kind == 'S' {
				successes++
			}
			switch {
			case attempt > st.attempt:
				st.attempt, st.ev = attempt, kind
			case attempt == st.attempt && (kind == 'S' || kind == 'R'):
				st.ev = kind
			}
		}
		lines++
		if lines == kill && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("round %d: child exited before the kill: %v\n%s", round, err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child did not die by SIGKILL: %v\n%s", round, err, stderr.String())
	}

	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatalf("round %d: reopening after kill: %v", round, err)
	}
	defer db.Close()
	f, err := frontier.New(frontier.Config{Store: db.Frontier(), Politeness: frontier.FixedDelay(0), Now: time.Now})
	if err != nil {
		t.Fatalf("round %d: frontier after kill: %v", round, err)
	}
	defer f.Close()
	// Far enough ahead that every retry is due.
	at := time.Now().Add(time.Hour)
	got := map[string]bool{}
	for {
		l, _, err := f.NextAt(at)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if l == nil {
			break
		}
		if got[l.URL] {
			t.Fatalf("round %d: %s queued twice after the crash", round, l.URL)
		}
		got[l.URL] = true
		if !strings.Contains(l.URL, fmt.Sprintf("/r%d/", round)) {
			t.Fatalf("round %d: %s from an earlier round is queued although it was drained", round, l.URL)
		}
		if _, err := f.DoneAt(at, l, frontier.Success(0)); err != nil {
			t.Fatal(err)
		}
	}
	for url, st := range state {
		switch {
		case st.ev == 'S' && got[url]:
			t.Fatalf("round %d: %s came back after its success (attempt %d) was acknowledged", round, url, st.attempt)
		case st.ev == 'S' || st.ev == 's':
			// Settled, or settling when killed: either outcome is
			// right for a pending success.
		case (st.added || st.ev == 'R' || st.ev == 'r') && !got[url]:
			t.Fatalf("round %d: %s lost: add acknowledged, last event %q of attempt %d, and it is not queued", round, url, st.ev, st.attempt)
		}
	}
	return adds, successes
}
