package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// suiteFiles lists the suites' data files in testdata, by suite name.
func suiteFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if name == "known_gaps" {
			continue
		}
		files[name] = p
	}
	return files
}

// TestEverySuiteHasItsData checks that the suites, their data files in
// testdata and the suites named in known_gaps.json are the same set, so a
// suite cannot silently go unrun and a gap cannot outlive its suite.
func TestEverySuiteHasItsData(t *testing.T) {
	files := suiteFiles(t)
	var fileNames, gapNames []string
	for n := range files {
		fileNames = append(fileNames, n)
	}
	for n := range knownGaps {
		gapNames = append(gapNames, n)
	}
	sort.Strings(fileNames)
	sort.Strings(gapNames)
	names := suiteNames()
	if !slices.Equal(names, fileNames) {
		t.Errorf("registered suites %q, data files in testdata %q: want the same names", names, fileNames)
	}
	if !slices.Equal(names, gapNames) {
		t.Errorf("registered suites %q, suites in testdata/known_gaps.json %q: want the same names", names, gapNames)
	}
	if len(names) != 4 {
		t.Errorf("%d suites registered, want 4 (robots, urlnorm, resolve, sitemaps): %q", len(names), names)
	}
}

// TestSuites runs every conformance suite against its copy in testdata. A
// failing case fails the test unless testdata/known_gaps.json records it with
// its reason; a recorded gap that passes, or that names no case of the suite,
// fails it too, so the list stays exact.
func TestSuites(t *testing.T) {
	files := suiteFiles(t)
	for _, name := range suiteNames() {
		t.Run(name, func(t *testing.T) {
			path, ok := files[name]
			if !ok {
				t.Fatalf("no testdata/%s.json", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := suites[name]
			results, err := s.run(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(results) == 0 {
				t.Fatalf("%s: no cases", path)
			}
			seen := map[string]bool{}
			passed, failed := 0, 0
			for _, r := range results {
				if seen[r.id] {
					t.Errorf("case id %s appears twice", r.id)
				}
				seen[r.id] = true
				reason, isGap := s.knownGaps[r.id]
				switch {
				case r.ok && isGap:
					passed++
					t.Errorf("%s passes but is listed in testdata/known_gaps.json; remove the entry", r.id)
				case r.ok:
					passed++
				case isGap:
					failed++
					t.Logf("GAP %s: %s (known: %s)", r.id, r.detail, reason)
				default:
					failed++
					t.Errorf("FAIL %s: %s", r.id, r.detail)
				}
			}
			for id := range s.knownGaps {
				if !seen[id] {
					t.Errorf("testdata/known_gaps.json lists %s, which is not a case of %s", id, path)
				}
			}
			t.Logf("%s: %d passed, %d failed (%d known gaps)", name, passed, failed, len(s.knownGaps))
		})
	}
}

// TestRunMainOnRepositoryCopies runs the command the way .ci/run does, on
// the repository's copies: every suite exits 0 and ends with its summary.
func TestRunMainOnRepositoryCopies(t *testing.T) {
	for name, path := range suiteFiles(t) {
		var out, errOut strings.Builder
		if code := runMain([]string{"-suite", name, "-file", path}, &out, &errOut); code != 0 {
			t.Errorf("-suite %s -file %s: exit %d\n%s%s", name, path, code, out.String(), errOut.String())
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, " failed") || !strings.Contains(last, " passed, ") {
			t.Errorf("-suite %s: last line %q is not the summary", name, last)
		}
	}
}

func TestKnownGapsNeedReasons(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a known gap without a reason was accepted")
		}
	}()
	mustDecodeGaps([]byte(`{"x": {"case.1": " "}}`))
}
