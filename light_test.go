package crawlkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRootLinksNoHeavyDependencies checks that a program using only the
// root package (an in-memory Crawler) does not link the store, metrics,
// dashboard and browser libraries of the packages it may opt into.
func TestRootLinksNoHeavyDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/crawlkit/crawlkit").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, heavy := range []string{
		"github.com/cockroachdb/pebble",
		"github.com/prometheus/client_golang",
		"github.com/chromedp/",
		"github.com/nats-io/",
		"github.com/jackc/pgx",
		"github.com/redis/go-redis",
		"github.com/crawlkit/crawlkit/service/dashboard",
	} {
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("the root package links %s", dep)
				break
			}
		}
	}
}
