package crawlkit

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// names returns the names of the cookies j sends to u, joined.
func names(j *cookieJar, u *url.URL) string {
	var n []string
	for _, c := range j.Cookies(u) {
		n = append(n, c.Name+"="+c.Value)
	}
	return strings.Join(n, " ")
}

// Cookies saved in a DataDir come back in the next jar: session cookies
// too, a Max-Age counted from when it was set (not from the restart),
// deletions applied, expired ones and other paths' left out.
func TestCookieJarSaveRestore(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	j, err := openCookieJar(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	site := mustURL(t, "https://www.club.test/account/login")
	j.SetCookies(site, []*http.Cookie{
		{Name: "session", Value: "s1"},                                     // host-only, path /account
		{Name: "pref", Value: "dark", Path: "/", Domain: "club.test"},      // domain cookie
		{Name: "short", Value: "x", Path: "/", MaxAge: 60},                 // lives a minute
		{Name: "gone", Value: "x", Path: "/", MaxAge: 3600},                // deleted below
		{Name: "old", Value: "x", Path: "/", Expires: now.Add(-time.Hour)}, // already expired
	})
	j.SetCookies(site, []*http.Cookie{{Name: "gone", Path: "/", MaxAge: -1}})
	j.loggedIn("www.club.test")
	if err := j.save(); err != nil {
		t.Fatal(err)
	}

	now = now.Add(30 * time.Second)
	k, err := openCookieJar(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(k, mustURL(t, "https://www.club.test/account/x")), "session=s1 pref=dark short=x"; got != want {
		t.Errorf("restored for /account/x: %q, want %q", got, want)
	}
	if got, want := names(k, mustURL(t, "https://blog.club.test/")), "pref=dark"; got != want {
		t.Errorf("restored for another host of the domain: %q, want %q", got, want)
	}
	if got := k.loggedInHosts(); len(got) != 1 || got[0] != "www.club.test" {
		t.Errorf("logged-in hosts %v", got)
	}

	// Past the minute the Max-Age cookie is not restored, even though
	// it was saved with one.
	now = now.Add(time.Minute)
	k, err = openCookieJar(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(k, mustURL(t, "https://www.club.test/")), "pref=dark"; got != want {
		t.Errorf("restored after a minute: %q, want %q", got, want)
	}
	if got := k.loggedInHosts(); len(got) != 1 {
		t.Errorf("logged-in hosts after a minute: %v", got)
	}

	// A login older than loginReuse is not trusted, live cookies or not.
	now = now.Add(loginReuse)
	if k, err = openCookieJar(dir, clock); err != nil {
		t.Fatal(err)
	}
	if got := k.loggedInHosts(); len(got) != 0 {
		t.Errorf("logged-in hosts after %v: %v", loginReuse, got)
	}
}

// The saved cookies are bounded per registrable domain and in all, the
// newest kept; an oversized cookie is not saved.
func TestCookieJarBounds(t *testing.T) {
	now := time.Unix(1e9, 0)
	j, err := openCookieJar(t.TempDir(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	u := mustURL(t, "http://a.test/")
	for i := range maxCookiesPerDomain + 10 {
		now = now.Add(time.Second)
		j.SetCookies(u, []*http.Cookie{{Name: fmt.Sprintf("c%d", i), Value: "v", Path: "/"}})
	}
	j.SetCookies(mustURL(t, "http://b.test/"), []*http.Cookie{{Name: "big", Value: strings.Repeat("x", maxCookieBytes), Path: "/"}})
	if len(j.recs) != maxCookiesPerDomain {
		t.Fatalf("%d cookies saved, want %d", len(j.recs), maxCookiesPerDomain)
	}
	for k := range j.recs {
		if strings.HasPrefix(k, "c0\x00") || strings.HasPrefix(k, "c9\x00") {
			t.Errorf("an oldest cookie was kept: %q", k)
		}
	}
	for i := range maxSavedCookies + 5 {
		j.SetCookies(mustURL(t, fmt.Sprintf("http://h%d.test/", i)), []*http.Cookie{{Name: "c", Value: "v", Path: "/"}})
	}
	if len(j.recs) != maxSavedCookies {
		t.Errorf("%d cookies saved, want %d", len(j.recs), maxSavedCookies)
	}
}

// A cookies file that is not JSON fails the open with the file's name; no
// temporary file is left beside a saved one.
func TestCookieJarFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cookiesFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openCookieJar(dir, time.Now); err == nil || !strings.Contains(err.Error(), cookiesFile) {
		t.Errorf("corrupt file: %v", err)
	}
	os.Remove(filepath.Join(dir, cookiesFile))
	j, err := openCookieJar(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	j.SetCookies(mustURL(t, "http://a.test/"), []*http.Cookie{{Name: "a", Value: "1"}})
	if err := j.save(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != cookiesFile {
		t.Errorf("directory holds %v, want only %s", ents, cookiesFile)
	}
}
