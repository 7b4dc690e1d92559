package crawlkit

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// The crawl's cookie jar (Config.Cookies). net/http/cookiejar keeps the
// cookies and decides which to send, but cannot list them; with a DataDir
// the jar also records each cookie a response sets, keyed as RFC 6265
// §5.3 keys them (name, domain, path), so that they can be written to the
// DataDir and put back into a new jar by the next Run. Session cookies are
// kept too: a crawl's session spans its Runs.

// cookiesFile is the file in the DataDir holding the crawl's cookies and
// the hosts Config.Login signed in to.
const cookiesFile = "cookies.json"

// Bounds of the saved cookies, RFC 6265 §6.1's least a user agent should
// keep: past them the oldest cookies are not saved (the jar of the Run
// still holds them).
const (
	// loginReuse is how long a login of an earlier Run is trusted: a
	// server forgets sessions too, and a session cookie does not say
	// when, so past it the host is logged in again.
	loginReuse = 12 * time.Hour

	maxCookiesPerDomain = 50
	maxSavedCookies     = 3000
	maxCookieBytes      = 4096
)

// cookieJar is the crawl's http.CookieJar.
type cookieJar struct {
	jar  *cookiejar.Jar
	path string // the DataDir's cookies file; empty keeps nothing
	now  func() time.Time

	mu        sync.Mutex
	recs      map[string]savedCookie // by cookieKey
	perDomain map[string]int         // records by registrable domain
	hosts     map[string]time.Time   // hosts logged in, and when
	dirty     bool

	saveMu sync.Mutex // one save at a time
}

// savedCookie is one cookie as the cookies file keeps it.
type savedCookie struct {
	// URL is the request URL that set it (the host-only flag and the
	// default path derive from it); Domain its registrable domain, which
	// the per-domain bound counts by.
	URL    string `json:"url"`
	Domain string `json:"domain"`
	// SetCookie is the cookie as a Set-Cookie field value, its Max-Age
	// turned into an Expires date (RFC 6265 §5.2.2) so that it does not
	// live longer for having been saved.
	SetCookie string    `json:"set_cookie"`
	Expires   time.Time `json:"expires,omitzero"`
	Set       time.Time `json:"set"`
}

// cookiesState is the cookies file.
type cookiesState struct {
	Version  int                  `json:"version"`
	Cookies  []savedCookie        `json:"cookies"`
	LoggedIn map[string]time.Time `json:"logged_in,omitempty"`
}

// openCookieJar returns the crawl's jar, restored from dir's cookies file
// when dir is set.
func openCookieJar(dir string, now func() time.Time) (*cookieJar, error) {
	// Each registrable domain keeps its own cookies: the public suffix
	// list stops a site from setting them for "co.uk".
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, fmt.Errorf("crawlkit: cookie jar: %w", err)
	}
	j := &cookieJar{jar: jar, now: now, recs: map[string]savedCookie{}, perDomain: map[string]int{}, hosts: map[string]time.Time{}}
	if dir == "" {
		return j, nil
	}
	j.path = filepath.Join(dir, cookiesFile)
	b, err := os.ReadFile(j.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return j, nil
	case err != nil:
		return nil, fmt.Errorf("crawlkit: reading %s: %w", j.path, err)
	}
	var st cookiesState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("crawlkit: reading %s: %w (delete the file to start without cookies)", j.path, err)
	}
	j.restore(st)
	return j, nil
}

// restore puts st's live cookies into the jar, oldest first, and keeps
// the hosts logged in less than loginReuse ago that still have a cookie
// of their domain.
func (j *cookieJar) restore(st cookiesState) {
	now := j.now()
	slices.SortStableFunc(st.Cookies, func(a, b savedCookie) int { return a.Set.Compare(b.Set) })
	live := map[string]bool{}
	for _, rec := range st.Cookies {
		if !rec.Expires.IsZero() && !rec.Expires.After(now) {
			continue
		}
		c, err := http.ParseSetCookie(rec.SetCookie)
		if err != nil {
			continue
		}
		u, err := url.Parse(rec.URL)
		if err != nil || u.Host == "" {
			continue
		}
		j.jar.SetCookies(u, []*http.Cookie{c})
		j.put(cookieKey(u, c), rec)
		live[rec.Domain] = true
	}
	for h, at := range st.LoggedIn {
		if live[registrableDomain(h)] && now.Sub(at) < loginReuse {
			j.hosts[h] = at
		}
	}
	j.dirty = false
}

// Cookies returns the cookies to send to u.
func (j *cookieJar) Cookies(u *url.URL) []*http.Cookie { return j.jar.Cookies(u) }

// SetCookies stores the cookies of a response from u, and records them
// for the cookies file.
func (j *cookieJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.jar.SetCookies(u, cookies)
	if j.path == "" || len(cookies) == 0 {
		return
	}
	now := j.now()
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	domain := registrableDomain(u.Hostname())
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cookies {
		key := cookieKey(u, c)
		// RFC 6265 §5.2.2: Max-Age zero or less, or an Expires in the
		// past, removes the cookie.
		if c.MaxAge < 0 || (!c.Expires.IsZero() && !c.Expires.After(now)) {
			if old, ok := j.recs[key]; ok {
				j.drop(key, old)
			}
			continue
		}
		sc := *c
		if sc.MaxAge > 0 {
			sc.Expires, sc.MaxAge = now.Add(time.Duration(sc.MaxAge)*time.Second), 0
		}
		sc.Raw, sc.RawExpires, sc.Unparsed = "", "", nil
		line := sc.String()
		if line == "" || len(line) > maxCookieBytes {
			continue
		}
		j.put(key, savedCookie{URL: origin, Domain: domain, SetCookie: line, Expires: sc.Expires, Set: now})
	}
}

// put records rec under key, dropping the oldest records past the
// per-domain and total bounds. It requires j.mu held (or j not yet
// shared).
func (j *cookieJar) put(key string, rec savedCookie) {
	if old, ok := j.recs[key]; ok {
		j.drop(key, old)
	}
	j.recs[key] = rec
	j.perDomain[rec.Domain]++
	j.dirty = true
	if j.perDomain[rec.Domain] > maxCookiesPerDomain {
		j.dropOldest(rec.Domain)
	}
	if len(j.recs) > maxSavedCookies {
		j.dropOldest("")
	}
}

// drop removes the record rec under key. It requires j.mu held.
func (j *cookieJar) drop(key string, rec savedCookie) {
	delete(j.recs, key)
	if j.perDomain[rec.Domain]--; j.perDomain[rec.Domain] <= 0 {
		delete(j.perDomain, rec.Domain)
	}
	j.dirty = true
}

// dropOldest removes the record set first, of domain if it is not empty.
// It requires j.mu held.
func (j *cookieJar) dropOldest(domain string) {
	var oldest string
	var rec savedCookie
	for k, r := range j.recs {
		if domain != "" && r.Domain != domain {
			continue
		}
		if oldest == "" || r.Set.Before(rec.Set) || (r.Set.Equal(rec.Set) && k < oldest) {
			oldest, rec = k, r
		}
	}
	if oldest != "" {
		j.drop(oldest, rec)
	}
}

// loggedIn records that Config.Login signed in to host.
func (j *cookieJar) loggedIn(host string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.hosts[host] = j.now()
	j.dirty = true
}

// loggedInHosts returns the hosts an earlier Run logged in to whose
// cookies are still live.
func (j *cookieJar) loggedInHosts() []string {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	hosts := make([]string, 0, len(j.hosts))
	for h := range j.hosts {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return hosts
}

// save writes the cookies file if anything changed since the last save,
// atomically (a temporary file renamed over it), so that a crash leaves
// the old file or the new one.
func (j *cookieJar) save() error {
	if j == nil || j.path == "" {
		return nil
	}
	j.saveMu.Lock()
	defer j.saveMu.Unlock()
	j.mu.Lock()
	if !j.dirty {
		j.mu.Unlock()
		return nil
	}
	st := cookiesState{Version: 1, Cookies: make([]savedCookie, 0, len(j.recs))}
	for _, r := range j.recs {
		st.Cookies = append(st.Cookies, r)
	}
	st.LoggedIn = maps.Clone(j.hosts)
	j.dirty = false
	j.mu.Unlock()
	slices.SortFunc(st.Cookies, func(a, b savedCookie) int {
		return cmp.Or(a.Set.Compare(b.Set), strings.Compare(a.URL, b.URL), strings.Compare(a.SetCookie, b.SetCookie))
	})
	err := writeFileAtomic(j.path, st)
	if err != nil {
		j.mu.Lock()
		j.dirty = true
		j.mu.Unlock()
		return fmt.Errorf("crawlkit: saving cookies: %w", err)
	}
	return nil
}

// writeFileAtomic writes v as JSON to path through a synced temporary file
// renamed over it.
func writeFileAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// cookieKey identifies a cookie as RFC 6265 §5.3 step 11 does: by name,
// domain (the request host for a host-only cookie) and path.
func cookieKey(u *url.URL, c *http.Cookie) string {
	domain := "=" + strings.ToLower(u.Hostname()) // host-only
	if c.Domain != "" {
		domain = strings.ToLower(strings.TrimPrefix(c.Domain, "."))
	}
	path := c.Path
	if path == "" || path[0] != '/' {
		path = defaultCookiePath(u.Path)
	}
	return c.Name + "\x00" + domain + "\x00" + path
}

// defaultCookiePath is RFC 6265 §5.1.4's default path of a request path.
func defaultCookiePath(p string) string {
	if p == "" || p[0] != '/' {
		return "/"
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// registrableDomain returns host's registrable domain, or host itself (an
// IP address, a public suffix).
func registrableDomain(host string) string {
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.Contains(h, "[") {
		host = h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(host))
	if err != nil {
		return strings.ToLower(host)
	}
	return d
}
