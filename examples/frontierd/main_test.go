package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/service/frontierapi"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := func(k string) string {
		if k == "CRAWLKIT_TOKEN" {
			return "env-token"
		}
		return ""
	}
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-dashboard", "127.0.0.1:0", "-data", filepath.Join(dir, "db"), "-no-robots",
			"-allowed-host", "frontier.test"},
			env, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	var api, dash string
	for (api == "" || dash == "") && lines.Scan() {
		l := lines.Text()
		if rest, ok := strings.CutPrefix(l, "frontierd: API on "); ok {
			api = strings.TrimSuffix(strings.Fields(rest)[0], "/api/v1/")
		}
		if rest, ok := strings.CutPrefix(l, "frontierd: dashboard on "); ok {
			dash = rest
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	c := frontierapi.NewClient(api, "env-token", nil)
	resp, err := c.Submit(ctx, frontierapi.SubmitRequest{URLs: []frontierapi.SubmitURL{{URL: "https://example.com/"}}})
	if err != nil || resp.Accepted != 1 {
		t.Fatalf("submit: %v %+v", err, resp)
	}
	if _, err := frontierapi.NewClient(api, "other", nil).Stats(ctx); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	// A bad priority rejects its entry, not the batch.
	resp, err = c.Submit(ctx, frontierapi.SubmitRequest{URLs: []frontierapi.SubmitURL{{URL: "https://example.org/"}, {URL: "https://example.net/", Priority: -3}}})
	if err != nil || resp.Accepted != 1 || resp.Rejected != 1 || !strings.HasPrefix(resp.Results[1].Reason, "invalid_priority") {
		t.Fatalf("submit with a negative priority: %v %+v", err, resp)
	}
	status := func(url, host, auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	for _, tc := range []struct {
		url, host, auth string
		want            int
	}{
		{dash + "api/snapshot", "", "", 200},
		// Analysis makes the service work: it needs the token.
		{dash + "api/url?url=https%3A%2F%2Fexample.com%2F", "", "", 401},
		{dash + "api/host?host=example.com", "", "other", 401},
		{dash + "api/url?url=https%3A%2F%2Fexample.com%2F", "", "env-token", 200},
		// DNS rebinding: a foreign name is refused on both listeners;
		// -allowed-host names are not.
		{dash + "api/snapshot", "rebound.example", "", 403},
		{dash, "rebound.example", "", 403},
		{api + "/api/v1/stats", "rebound.example", "env-token", 403},
		{api + "/api/v1/stats", "frontier.test", "env-token", 200},
		{dash + "api/snapshot", "frontier.test", "", 200},
	} {
		if got := status(tc.url, tc.host, tc.auth); got != tc.want {
			t.Errorf("GET %s Host %q token %q: %d, want %d", tc.url, tc.host, tc.auth, got, tc.want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(string) string { return "from-env" }
	none := func(string) string { return "" }
	for _, tc := range []struct {
		flag, file string
		env        func(string) string
		want       string
	}{
		{"from-flag", file, env, "from-flag"},
		{"", file, env, "from-file"},
		{"", "", env, "from-env"},
	} {
		got, err := loadToken(tc.flag, tc.file, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("loadToken(%q, %q): %q %v, want %q", tc.flag, tc.file, got, err, tc.want)
		}
	}
	if _, err := loadToken("", "", none); !errors.Is(err, errNoToken) {
		t.Errorf("no token: %v", err)
	}
	// A blank -token is no token, as a blank file or variable is.
	if tok, err := loadToken(" \t", "", none); !errors.Is(err, errNoToken) {
		t.Errorf("blank -token: %q %v, want errNoToken", tok, err)
	}
	if err := run(context.Background(), []string{"-data", filepath.Join(dir, "db")}, none, io.Discard, io.Discard); !errors.Is(err, errNoToken) {
		t.Errorf("run without a token: %v", err)
	}
}

// The robots.txt client refuses a loopback address before connecting.
func TestGuardedClientRefusesLoopback(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the guarded client connected to a loopback server")
	}))
	defer ts.Close()
	_, err := guardedClient(fetch.NewGuard()).Get(ts.URL + "/robots.txt")
	if !errors.Is(err, fetch.ErrBlockedAddress) {
		t.Fatalf("got %v, want ErrBlockedAddress", err)
	}
}

// Out-of-range flag values are refused with an error naming the flag, before
// the data directory is created, instead of panicking or being replaced by
// a default in silence.
func TestRunBadFlags(t *testing.T) {
	env := func(string) string { return "tok" }
	for _, args := range [][]string{
		{"-bands", "-1"},
		{"-bands", "0"},
		{"-bands", "17"},
		{"-lease-ttl", "0s"},
		{"-lease-ttl", "-1s"},
		{"-max-body", "0"},
		{"-max-body", "-5"},
		{"-allowed-host", "http://x/"},
	} {
		data := filepath.Join(t.TempDir(), "db")
		err := run(context.Background(), append(args, "-data", data, "-addr", "127.0.0.1:0", "-dashboard", ""),
			env, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("run %v: %v, want an error about %s", args, err, args[0])
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("run %v created the data directory", args)
		}
	}
}
