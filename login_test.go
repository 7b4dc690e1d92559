package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// memberSite serves a site whose pages need the session cookie a POST
// /login (user=ann, password=secret) sets, and counts the logins and the
// page requests that came without the cookie.
type memberSite struct {
	*hostsSite
	mu        sync.Mutex
	logins    int
	anonymous []string
	pages     []string
}

func newMemberSite(t *testing.T) *memberSite {
	m := &memberSite{}
	m.hostsSite = serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/login" && r.Method == http.MethodPost:
			m.mu.Lock()
			m.logins++
			m.mu.Unlock()
			if r.PostFormValue("user") != "ann" || r.PostFormValue("password") != "secret" {
				http.Error(w, "wrong password", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "ann-1", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/welcome", http.StatusSeeOther)
		case r.URL.Path == "/welcome":
			writeHTML(w, "<p>hello</p>")
		default:
			m.mu.Lock()
			m.pages = append(m.pages, r.URL.Path)
			if c, err := r.Cookie("sid"); err != nil || c.Value != "ann-1" {
				m.anonymous = append(m.anonymous, r.URL.Path)
				m.mu.Unlock()
				http.Error(w, "log in first", http.StatusForbidden)
				return
			}
			m.mu.Unlock()
			writeHTML(w, `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`)
		}
	})
	return m
}

// loginAs returns a LoginFunc that posts user and password to /login and
// fails unless the answer is 200 (after the redirect).
func loginAs(user, password string) crawlkit.LoginFunc {
	return func(ctx context.Context, s *crawlkit.Session) error {
		resp, err := s.PostForm(ctx, "/login", url.Values{"user": {user}, "password": {password}})
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("login answered %d", resp.StatusCode)
		}
		return nil
	}
}

// Config.Login posts the form once per host, before its first page, and
// every page request carries the session cookie it got, however many
// workers crawl the host at once.
func TestLogin(t *testing.T) {
	m := newMemberSite(t)
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://club.test/"}, DialContext: m.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, Workers: 4, MaxConnsPerHost: 3,
		Login: map[string]crawlkit.LoginFunc{"club.test": loginAs("ann", "secret")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.logins != 1 || len(m.anonymous) != 0 || len(m.pages) != 4 {
		t.Errorf("%d logins, pages %v, without the cookie %v; want 1 login and 4 pages with it", m.logins, m.pages, m.anonymous)
	}
	if st := c.Stats(); st.URLs.Successful != 4 {
		t.Errorf("%d successful, want 4", st.URLs.Successful)
	}
}

// A login that fails leaves the host's URLs unfetched, counted as
// login-failed; the log says so once, at Info.
func TestLoginFailed(t *testing.T) {
	m := newMemberSite(t)
	var log strings.Builder
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://club.test/", "http://club.test/a"}, DialContext: m.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, Logger: newTextLogger(&log),
		Login: map[string]crawlkit.LoginFunc{"club.test": loginAs("ann", "guess")},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Run(context.Background())
	if !errors.Is(err, crawlkit.ErrNothingFetched) {
		t.Errorf("Run: %v, want ErrNothingFetched", err)
	}
	if m.logins != 1 || len(m.pages) != 0 {
		t.Errorf("%d logins and pages %v, want 1 login and no page", m.logins, m.pages)
	}
	if n := c.Stats().URLs.NotFetched[crawlkit.ReasonLoginFailed]; n != 2 {
		t.Errorf("NotFetched[login-failed] = %d, want 2", n)
	}
	if n := strings.Count(log.String(), "login failed"); n != 1 {
		t.Errorf("the log says %d times that the login failed, want once:\n%s", n, log.String())
	}
}

// Bad Login keys and functions are refused with ErrConfig.
func TestLoginConfig(t *testing.T) {
	for _, login := range []map[string]crawlkit.LoginFunc{
		{"Club.test": loginAs("a", "b")},
		{"club.test:80": loginAs("a", "b")},
		{"http://club.test/": loginAs("a", "b")},
		{"club.test": nil},
	} {
		_, err := crawlkit.New(crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://club.test/"}, Login: login})
		if !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("%v: err %v, want ErrConfig", login, err)
		}
	}
}

// With a DataDir the session cookie is saved: a crawl stopped after its
// first page and run again on the same DataDir sends it with every page,
// without logging in again.
func TestLoginCookiesPersist(t *testing.T) {
	m := newMemberSite(t)
	dir := t.TempDir()
	run := func(maxPages int) *crawlkit.Crawler {
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://club.test/"}, DialContext: m.dial, AllowPrivate: loopback,
			Delay: crawlkit.NoDelay, DataDir: dir, MaxPages: maxPages,
			Login: map[string]crawlkit.LoginFunc{"club.test": loginAs("ann", "secret")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	run(1)
	if m.logins != 1 || len(m.pages) != 1 {
		t.Fatalf("first Run: %d logins, pages %v; want 1 and [/]", m.logins, m.pages)
	}
	c := run(0)
	if m.logins != 1 || len(m.anonymous) != 0 || len(m.pages) != 4 {
		t.Errorf("after the second Run: %d logins, pages %v, without the cookie %v; want 1 login and 4 pages with it", m.logins, m.pages, m.anonymous)
	}
	if st := c.Stats(); st.URLs.Successful != 3 {
		t.Errorf("second Run: %d successful, want 3", st.URLs.Successful)
	}
}

// newTextLogger logs at Info and above, as text, to w.
func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// A login under way is what the host's URLs wait for, and Stats says so.
func TestLoginIsAWait(t *testing.T) {
	m := newMemberSite(t)
	entered, release := make(chan struct{}), make(chan struct{})
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://club.test/", "http://club.test/a"}, DialContext: m.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay,
		Login: map[string]crawlkit.LoginFunc{"club.test": func(ctx context.Context, s *crawlkit.Session) error {
			close(entered)
			<-release
			return loginAs("ann", "secret")(ctx, s)
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	<-entered
	if n := c.Stats().Waiting.LoginHosts; n != 1 {
		t.Errorf("during the login Waiting.LoginHosts = %d, want 1", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := c.Stats().Waiting.LoginHosts; n != 0 {
		t.Errorf("after the crawl Waiting.LoginHosts = %d, want 0", n)
	}
}
