package robots

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// LiveHeap returns the live heap after a full collection. It is exported
// for the package's external tests.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// memShapes are robots.txt files of about size octets that stress
// different parts of the parsed structures.
func memShapes(size int) map[string]string {
	fill := func(head string, line func(i int) string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; ; i++ {
			l := line(i)
			if b.Len()+len(l) > size {
				return b.String()
			}
			b.WriteString(l)
		}
	}
	return map[string]string{
		"short":      fill("User-agent: *\n", func(i int) string { return fmt.Sprintf("Disallow:/%x\n", i) }),
		"long":       fill("User-agent: *\n", func(i int) string { return fmt.Sprintf("Disallow: /%s/%d\n", strings.Repeat("dir/", 30), i) }),
		"wildcard":   fill("User-agent: *\n", func(i int) string { return fmt.Sprintf("Allow:/*a%x*b*%x$\n", i, i) }),
		"wildprefix": fill("User-agent: *\n", func(i int) string { return fmt.Sprintf("Disallow:/%x*.pdf$\n", i) }),
		"escaped":    fill("User-agent: *\n", func(i int) string { return fmt.Sprintf("Disallow:x/é%%7e%x\n", i) }),
		"groups": fill("", func(i int) string {
			return fmt.Sprintf("User-agent: bot%x\nUser-agent: *\nDisallow:/%x\nCrawl-delay: 1\n", i, i)
		}),
		"comments": fill("User-agent: *\nDisallow: /a\n", func(int) string { return "# " + strings.Repeat("x", 70) + "\n" }),
	}
}

// TestPolicyMemSize calibrates memSize: for each shape, the heap a parsed
// policy retains once a product token's matcher is compiled must not
// exceed the estimate, and the estimate must not exceed it by more than a
// quarter (twice for wildcard rules sharing one prefix).
func TestPolicyMemSize(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates some 100 MiB")
	}
	const copies = 4
	for name, body := range memShapes(DefaultMaxBytes) {
		t.Run(name, func(t *testing.T) {
			raw := []byte(body)
			ps := make([]*Policy, copies)
			before := LiveHeap()
			for i := range ps {
				ps[i] = Parse(raw)
				ps[i].Allowed("bot", "/x")
			}
			used := float64(LiveHeap()-before) / copies
			est := float64(ps[0].memSize())
			runtime.KeepAlive(ps)
			t.Logf("%d rules, %d octets: measured %.0f, estimated %.0f (%+.1f%%), %.0f octets per rule",
				len(ps[0].rules), len(body), used, est, 100*(est-used)/used, (used-float64(len(body)))/float64(max(1, len(ps[0].rules))))
			limit := 1.25
			if name == "wildcard" {
				limit = 2.2
			}
			if est < used-4096 || est > limit*used+4096 { // 4 KiB of measurement noise
				t.Errorf("estimate %.0f octets, measured %.0f", est, used)
			}
		})
	}
}
