package main

import (
	"maps"
	"net/url"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
)

// judge is the server's accounting of a crawl, with the rules of
// crawltest's (see crawltest.Report): a request is in flight from its
// arrival until its response is ready (after the drawn latency, before the
// body is written); one that arrives while another request to its host is
// in flight is a concurrency violation; one that arrives sooner than the
// host's Crawl-delay after the previous one ended is a spacing violation; a
// request for a page robots.txt disallows is a robots violation; a request
// for a page already requested is an exact repeat if its URL was spelled
// the same, a spelling repeat otherwise. Requests for /robots.txt are left
// out of all of these, and counted apart.
type judge struct {
	s     *site
	truth map[int]bool

	mu sync.Mutex
	counts
}

// counts is what reset clears.
type counts struct {
	pages   int
	robots  int
	notFnd  int
	nfURLs  []string
	offWeb  int
	robViol int
	robURLs []string
	before  int
	spacing int
	concur  int
	exact   int
	spell   int
	perURL  map[string]int
	perPage map[int]int
	hosts   map[int]*hostState
	wire    int64
	decoded int64
	enc     map[string]int
	proto   map[string]int
	shakes  int
}

type hostState struct {
	robotsFetched bool
	inFlight      int
	lastEnd       time.Time
	ended         bool
}

func newJudge(s *site, truth map[int]bool) *judge {
	j := &judge{s: s, truth: truth}
	j.reset()
	return j
}

func (j *judge) reset() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.counts = counts{
		perURL: map[string]int{}, perPage: map[int]int{}, hosts: map[int]*hostState{},
		enc: map[string]int{}, proto: map[string]int{}}
}

func (j *judge) host(h int) *hostState {
	hs := j.hosts[h]
	if hs == nil {
		hs = &hostState{}
		j.hosts[h] = hs
	}
	return hs
}

// handshake counts a completed TLS handshake.
func (j *judge) handshake() {
	j.mu.Lock()
	j.shakes++
	j.mu.Unlock()
}

// request counts a request's protocol.
func (j *judge) request(proto string) {
	j.mu.Lock()
	j.proto[proto]++
	j.mu.Unlock()
}

// offWebRequest counts a request for a host the web does not have.
func (j *judge) offWebRequest() {
	j.mu.Lock()
	j.offWeb++
	j.mu.Unlock()
}

// robotsRequest counts a /robots.txt request to host h.
func (j *judge) robotsRequest(h int) {
	j.mu.Lock()
	j.robots++
	j.host(h).robotsFetched = true
	j.mu.Unlock()
}

// begin accounts a page request to host h for the URL spelled
// "https://"+Host+RequestURI, which names page id (-1: none of the web's);
// the function it returns records the request's end.
func (j *judge) begin(h int, spelled string, id int) (end func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now()
	j.pages++
	hs := j.host(h)
	if !hs.robotsFetched {
		j.before++
	}
	hr := j.s.hosts[h]
	if id >= 0 && hr.robots.disallows(j.s.pages[id].path) {
		j.robViol++
		if len(j.robURLs) < 10 {
			j.robURLs = append(j.robURLs, spelled)
		}
	}
	if hs.inFlight > 0 {
		j.concur++
	} else if hs.ended && now.Sub(hs.lastEnd) < hr.robots.delay() {
		j.spacing++
	}
	hs.inFlight++
	j.perURL[spelled]++
	if id < 0 {
		j.notFnd++
		if len(j.nfURLs) < 10 {
			j.nfURLs = append(j.nfURLs, spelled)
		}
	} else {
		if j.perPage[id] > 0 {
			if j.perURL[spelled] > 1 {
				j.exact++
			} else {
				j.spell++
			}
		}
		j.perPage[id]++
	}
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.hosts[h] != hs {
			return // reset meanwhile
		}
		hs.inFlight--
		hs.lastEnd, hs.ended = time.Now(), true
	}
}

// sent counts a page response's body bytes as sent and decoded.
func (j *judge) sent(encoding string, wire, decoded int) {
	j.mu.Lock()
	j.enc[encoding]++
	j.wire += int64(wire)
	j.decoded += int64(decoded)
	j.mu.Unlock()
}

// lookup returns the page a request names, through the canonical form of
// its URL (crawltest.Canonical: fragment, tracking parameters and default
// port dropped, …), or -1.
func (s *site) lookup(spelled string) int {
	c, err := crawltest.Canonical(spelled)
	if err != nil {
		return -1
	}
	u, err := url.Parse(c)
	if err != nil || u.RawQuery != "" {
		return -1
	}
	if id, ok := s.byHostPath[u.Host+u.EscapedPath()]; ok {
		return id
	}
	return -1
}

// report is the accounting so far, in the harness's shape.
type report struct {
	Pages, RobotsFetches, NotFound, OffWeb                int
	RobotsViolations, BeforeRobots                        int
	RobotsViolationURLs, NotFoundURLs                     []string
	SpacingViolations, ConcurrencyViolations              int
	ExactRepeats, SpellingRepeats, Covered, TLSHandshakes int
	WireBytes, DecodedBytes                               int64
	Encodings, Protocols                                  map[string]int
}

func (j *judge) report() report {
	j.mu.Lock()
	defer j.mu.Unlock()
	covered := 0
	for id := range j.perPage {
		if j.truth[id] {
			covered++
		}
	}
	return report{
		Pages: j.pages, RobotsFetches: j.robots, NotFound: j.notFnd, OffWeb: j.offWeb,
		RobotsViolations: j.robViol, BeforeRobots: j.before, RobotsViolationURLs: append([]string(nil), j.robURLs...),
		NotFoundURLs:      append([]string(nil), j.nfURLs...),
		SpacingViolations: j.spacing, ConcurrencyViolations: j.concur,
		ExactRepeats: j.exact, SpellingRepeats: j.spell, Covered: covered, TLSHandshakes: j.shakes,
		WireBytes: j.wire, DecodedBytes: j.decoded,
		Encodings: maps.Clone(j.enc), Protocols: maps.Clone(j.proto),
	}
}
