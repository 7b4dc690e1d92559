package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCountsAndExitStatus(t *testing.T) {
	results := []result{
		{id: "a", ok: true},
		{id: "b", ok: false, detail: "expected x, got y"},
		{id: "c", ok: false, detail: "expected p, got q"},
		{id: "d", ok: true},
	}
	var out bytes.Buffer
	code := report(results, map[string]string{"c": "documented reason", "d": "stale"}, false, &out)
	if code != 1 {
		t.Errorf("exit status = %d, want 1 (case b is an unexplained failure)", code)
	}
	got := out.String()
	for _, want := range []string{
		"FAIL b: expected x, got y\n",
		"GAP c: expected p, got q (known: documented reason)\n",
		"FIXED d:",
		"2 passed, 2 failed\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "2 passed, 2 failed\n") {
		t.Errorf("summary is not the last line:\n%s", got)
	}

	out.Reset()
	if code := report(results[2:], map[string]string{"c": "reason"}, false, &out); code != 0 {
		t.Errorf("only known gaps failed, exit status = %d, want 0", code)
	}
}

func TestRunMainWithRegisteredSuite(t *testing.T) {
	type fakeCase struct {
		ID   string `json:"id"`
		Want int    `json:"want"`
	}
	suites["fake-test-suite"] = suite{run: func(data []byte) ([]result, error) {
		cases, err := decodeCases[fakeCase](data)
		if err != nil {
			return nil, err
		}
		var rs []result
		for _, c := range cases {
			got := len(c.ID)
			rs = append(rs, result{id: c.ID, ok: got == c.Want, detail: "expected " + quote(c.Want) + ", got " + quote(got)})
		}
		return rs, nil
	}}
	t.Cleanup(func() { delete(suites, "fake-test-suite") })

	dir := t.TempDir()
	file := filepath.Join(dir, "cases.json")
	if err := os.WriteFile(file, []byte(`[{"id":"abc","want":3},{"id":"xy","want":5}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := runMain([]string{"-suite", "fake-test-suite", "-file", file}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit = %d, want 1; stderr: %s", code, errOut.String())
	}
	if want := "FAIL xy: expected 5, got 2\n1 passed, 1 failed\n"; out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}

	// An unknown field means the schema changed: a usage error, not a pass.
	if err := os.WriteFile(file, []byte(`[{"id":"abc","want":3,"extra":1}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := runMain([]string{"-suite", "fake-test-suite", "-file", file}, &out, &errOut); code != 2 {
		t.Errorf("unknown field: exit = %d, want 2", code)
	}

	if code := runMain([]string{"-suite", "no-such-suite", "-file", file}, &out, &errOut); code != 2 {
		t.Errorf("unknown suite: exit = %d, want 2", code)
	}
	if code := runMain([]string{"-suite", "fake-test-suite", "-file", filepath.Join(dir, "missing.json")}, &out, &errOut); code != 2 {
		t.Errorf("missing file: exit = %d, want 2", code)
	}
}

func TestQuote(t *testing.T) {
	s := "x"
	var nilStr *string
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "<nil>"},
		{"a\tb", `"a\tb"`},
		{&s, `"x"`},
		{nilStr, "null"},
		{errors.New("bad"), "error: bad"},
		{[]string{"a"}, `["a"]`},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
