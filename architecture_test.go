package crawlkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// kindOf is a package's kind read from its folder alone, as ARCHITECTURE.md
// states it; "" means the folder says no kind.
func kindOf(rel string) string {
	parts := strings.Split(rel, "/")
	last := parts[len(parts)-1]
	switch {
	case rel == "":
		return "assembly"
	case parts[0] == "internal" || strings.Contains(rel, "/internal/"):
		return "internal"
	case parts[0] == "examples":
		return "program"
	case parts[0] == "service":
		return "service"
	case strings.HasSuffix(last, "test"):
		return "kit"
	case len(parts) == 2 && (parts[0] == "storage" || parts[0] == "archive" || parts[0] == "render" || parts[0] == "metrics"):
		return "adapter"
	case len(parts) == 1:
		return "component"
	}
	return ""
}

// mayImport lists, for each kind, the kinds of this module it may import.
var mayImport = map[string][]string{
	"component": {"component", "internal"},
	"adapter":   {"component", "adapter", "assembly", "internal"},
	"kit":       {"component", "assembly", "internal"},
	"service":   {"component", "service", "assembly", "internal"},
	"assembly":  {"component", "adapter", "internal"},
	"internal":  {"component", "adapter", "kit", "internal"},
	"program":   {"component", "adapter", "assembly", "kit", "service", "program", "internal"},
}

// TestTreeShowsKinds checks that every package's folder names its kind
// (component, adapter, kit, service, program, internal), and that imports
// between kinds follow ARCHITECTURE.md's rules: a component never reaches an
// adapter, a service or the root, and crawltest imports nothing of the
// module, so it cannot share the bugs it judges.
func TestTreeShowsKinds(t *testing.T) {
	const mod = "github.com/crawlkit/crawlkit"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == mod {
			return "", true
		}
		r, ok := strings.CutPrefix(p, mod+"/")
		return r, ok
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, "\t")
		from, _ := rel(path)
		kind := kindOf(from)
		seen[kind] = true
		if kind == "" {
			t.Errorf("%s: its folder says no kind (see ARCHITECTURE.md)", path)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			if from == "crawltest" {
				t.Errorf("crawltest imports %s: the judge must not share the code it judges", imp)
			}
			if !allowed(kind, kindOf(to)) {
				t.Errorf("%s (%s) imports %s (%s)", path, kind, imp, kindOf(to))
			}
		}
	}
	for _, k := range []string{"assembly", "component", "adapter", "kit", "service", "program", "internal"} {
		if !seen[k] {
			t.Errorf("no package of kind %s: kindOf no longer reads the tree", k)
		}
	}
}

func allowed(from, to string) bool {
	for _, k := range mayImport[from] {
		if k == to {
			return true
		}
	}
	return false
}

// TestKindOf pins the folder rule on names that could be misread.
func TestKindOf(t *testing.T) {
	for rel, want := range map[string]string{
		"":                        "assembly",
		"fetch":                   "component",
		"render":                  "component",
		"render/chromium":         "adapter",
		"storage/pebble":          "adapter",
		"archive/warc":            "adapter",
		"metrics/prometheus":      "adapter",
		"frontier/frontiertest":   "kit",
		"crawltest":               "kit",
		"service/dashboard/live":  "service",
		"storage/internal/idle":   "internal",
		"examples/scrape/shop":    "program",
		"frontier/scheduler/deep": "",
	} {
		if got := kindOf(rel); got != want {
			t.Errorf("kindOf(%q) = %q, want %q", rel, got, want)
		}
	}
}
