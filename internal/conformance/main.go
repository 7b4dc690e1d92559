// Command conformance runs one of the shared conformance suites against
// crawlkit's packages and reports the result.
//
// Usage:
//
//	go run ./internal/conformance -suite NAME -file PATH [-v]
//	go run ./internal/conformance -list
//
// The suites' data files are kept in testdata (see its README.md for their
// sources and licenses); the package's tests run every suite against them,
// so "go test" checks them as well.
//
// It prints one "FAIL <id>: <expected>, <got>" line per failing case, one
// "GAP <id>: <reason>" line per failing case that is recorded as a known,
// explained gap, and ends with the line "N passed, M failed". The exit status
// is 1 when any case failed that is not a known gap, and 2 when the file or
// the flags are unusable.
//
// Each suite lives in its own file of this package and registers itself in
// the suites table with its runner. Its known gaps are data, not code: they
// are read from testdata/known_gaps.json, which is compiled into the command
// so that it works from any directory and with a suite file kept elsewhere.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// suite describes one conformance suite.
type suite struct {
	// run decodes the suite file's JSON and evaluates every case.
	run func(data []byte) ([]result, error)
	// knownGaps maps a case id to the reason the project deliberately does
	// not pass it. A listed case that passes is reported as "FIXED" so the
	// entry can be removed. It is the suite's entry in knownGapsJSON.
	knownGaps map[string]string
}

// knownGapsJSON maps a suite name to its known gaps: case id to reason.
//
//go:embed testdata/known_gaps.json
var knownGapsJSON []byte

// knownGaps is knownGapsJSON decoded.
var knownGaps = mustDecodeGaps(knownGapsJSON)

func mustDecodeGaps(data []byte) map[string]map[string]string {
	var g map[string]map[string]string
	if err := json.Unmarshal(data, &g); err != nil {
		panic("conformance: testdata/known_gaps.json: " + err.Error())
	}
	for name, gaps := range g {
		for id, reason := range gaps {
			if strings.TrimSpace(reason) == "" {
				panic("conformance: testdata/known_gaps.json: " + name + " " + id + ": a known gap needs its reason")
			}
		}
	}
	return g
}

// result is the outcome of one case.
type result struct {
	id string
	ok bool
	// detail says what was expected and what came back; set when !ok.
	detail string
}

// suites is the table of available suites, keyed by the -suite name. Each
// suite file adds its entry from an init function, the way database/sql
// drivers register: a suite exists exactly when its package does.
var suites = map[string]suite{}

// register adds a suite with its runner; its known gaps come from
// knownGapsJSON.
func register(name string, run func(data []byte) ([]result, error)) {
	if _, dup := suites[name]; dup {
		panic("conformance: suite registered twice: " + name)
	}
	suites[name] = suite{run: run, knownGaps: knownGaps[name]}
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain is main without the process exit, so it can be tested.
func runMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("suite", "", "suite to run: "+strings.Join(suiteNames(), ", "))
	file := fs.String("file", "", "path of the suite's JSON file")
	verbose := fs.Bool("v", false, "also print passing case ids")
	list := fs.Bool("list", false, "print the names of the available suites and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, n := range suiteNames() {
			fmt.Fprintln(stdout, n)
		}
		return 0
	}
	s, ok := suites[*name]
	if !ok {
		fmt.Fprintf(stderr, "conformance: unknown suite %q (have: %s)\n", *name, strings.Join(suiteNames(), ", "))
		return 2
	}
	if *file == "" {
		fmt.Fprintln(stderr, "conformance: -file is required")
		return 2
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(stderr, "conformance: %v\n", err)
		return 2
	}
	results, err := s.run(data)
	if err != nil {
		fmt.Fprintf(stderr, "conformance: suite %s: %s: %v\n", *name, *file, err)
		return 2
	}
	return report(results, s.knownGaps, *verbose, stdout)
}

// report prints the per-case lines and the summary, and returns the exit
// status: 1 when a failure is not a known gap.
func report(results []result, gaps map[string]string, verbose bool, w io.Writer) int {
	passed, failed, unexplained := 0, 0, 0
	for _, r := range results {
		reason, isGap := gaps[r.id]
		switch {
		case r.ok && isGap:
			passed++
			fmt.Fprintf(w, "FIXED %s: listed as a known gap but passes; remove it from testdata/known_gaps.json\n", r.id)
		case r.ok:
			passed++
			if verbose {
				fmt.Fprintf(w, "ok %s\n", r.id)
			}
		case isGap:
			failed++
			fmt.Fprintf(w, "GAP %s: %s (known: %s)\n", r.id, r.detail, reason)
		default:
			failed++
			unexplained++
			fmt.Fprintf(w, "FAIL %s: %s\n", r.id, r.detail)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	if unexplained > 0 {
		return 1
	}
	return 0
}

func suiteNames() []string {
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// decodeCases decodes a suite file (a JSON array of cases), rejecting
// unknown fields so a schema change is noticed rather than silently ignored.
func decodeCases[T any](data []byte) ([]T, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var cases []T
	if err := dec.Decode(&cases); err != nil {
		return nil, fmt.Errorf("decoding cases: %w", err)
	}
	return cases, nil
}

// quote renders a value for a FAIL line.
func quote(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return fmt.Sprintf("%q", x)
	case *string:
		if x == nil {
			return "null"
		}
		return fmt.Sprintf("%q", *x)
	case error:
		return "error: " + x.Error()
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}
