package trap

import (
	"encoding/gob"
	"fmt"
	"io"
	"maps"
	"slices"
)

// A Detector's learning is crawl state: a crawl that restarts with an
// empty detector fetches its traps' pages again until each rule has seen
// enough of them. Snapshot writes what the detector has learned (per-host
// counts, patterns, content groups and verdicts; per-domain host counts)
// and Restore reads it into a new Detector, so an interrupted crawl
// fetches no more trap pages than an uninterrupted one. The keys of the
// pages whose content was reported are left out: up to 8 192 per host,
// they would make the snapshot grow with the crawl, and forgetting them
// can only count a page's content once more, bringing a verdict sooner.

// snapshotVersion is written first; Restore refuses another.
const snapshotVersion = 1

type snapValues struct {
	V                []uint64
	Crossed, Stopped bool
}

type snapGroup struct {
	FP, Links, CP uint64
	N             int32
	Spans         bool
}

type snapContent struct {
	Reports     int
	Same, Exact []snapGroup
}

type snapHost struct {
	Name                   string
	Budgets                Budgets
	Refused                Verdict
	Full                   bool
	URLs                   []uint64
	Accepted               int
	Patterns               map[uint64]int32
	Params, Steps, Repeats map[uint64]snapValues
	Growth                 map[uint64]int32
	Grown, Flagged         []uint64
	Content                map[uint64]snapContent
	Marks                  map[uint64]Verdict
	HostWide               snapContent
	Stopped                Verdict
}

type snapDomain struct {
	Name   string
	Hosts  []uint64
	Count  int
	Full   bool
	Minted map[uint64]int32
}

type snapshot struct {
	Version int
	Hosts   []snapHost // least recently used first, per shard
	Domains []snapDomain
}

func keysOf[V any](m map[uint64]V) []uint64 { return slices.Sorted(maps.Keys(m)) }

func setOf(keys []uint64) map[uint64]struct{} {
	if len(keys) == 0 {
		return nil
	}
	m := make(map[uint64]struct{}, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

func snapValueSets(m map[uint64]*valueSet) map[uint64]snapValues {
	out := make(map[uint64]snapValues, len(m))
	for k, v := range m {
		out[k] = snapValues{V: v.v, Crossed: v.crossed, Stopped: v.stopped}
	}
	return out
}

func valueSets(m map[uint64]snapValues) map[uint64]*valueSet {
	if len(m) == 0 {
		return nil
	}
	out := make(map[uint64]*valueSet, len(m))
	for k, v := range m {
		out[k] = &valueSet{v: v.V, crossed: v.Crossed, stopped: v.Stopped}
	}
	return out
}

func snapGroups(g *groups) []snapGroup {
	var out []snapGroup
	for _, x := range g {
		if x.n > 0 {
			out = append(out, snapGroup{FP: x.fp, Links: x.links, CP: x.cp, N: x.n, Spans: x.spans})
		}
	}
	return out
}

func restoreGroups(gs []snapGroup) (g groups) {
	for i, x := range gs {
		if i < len(g) {
			g[i].fp, g[i].links, g[i].cp, g[i].n, g[i].spans = x.FP, x.Links, x.CP, x.N, x.Spans
		}
	}
	return g
}

func snapContentStats(c *contentStats) snapContent {
	return snapContent{Reports: c.reports, Same: snapGroups(&c.same), Exact: snapGroups(&c.exact)}
}

func restoreContent(c snapContent) contentStats {
	return contentStats{reports: c.Reports, same: restoreGroups(c.Same), exact: restoreGroups(c.Exact)}
}

// Snapshot writes what the detector has learned to w. It is safe to call
// while the detector is in use; each shard is copied under its lock.
func (d *Detector) Snapshot(w io.Writer) error {
	s := snapshot{Version: snapshotVersion}
	for i := range d.hosts {
		sh := &d.hosts[i]
		sh.mu.Lock()
		for hs := sh.tail; hs != nil; hs = hs.prev {
			h := snapHost{Name: hs.name, Budgets: hs.budgets, Refused: hs.refused, Full: hs.full,
				URLs: keysOf(hs.urls), Accepted: hs.accepted, Patterns: maps.Clone(hs.patterns),
				Params: snapValueSets(hs.params), Steps: snapValueSets(hs.steps), Repeats: snapValueSets(hs.repeats),
				Growth: maps.Clone(hs.growth), Grown: keysOf(hs.grown), Flagged: keysOf(hs.flagged),
				Marks:    maps.Clone(hs.marks),
				HostWide: snapContentStats(&hs.hostWide), Stopped: hs.stopped}
			if len(hs.content) > 0 {
				h.Content = make(map[uint64]snapContent, len(hs.content))
				for k, c := range hs.content {
					h.Content[k] = snapContentStats(c)
				}
			}
			s.Hosts = append(s.Hosts, h)
		}
		sh.mu.Unlock()
	}
	for i := range d.domains {
		sh := &d.domains[i]
		sh.mu.Lock()
		for ds := sh.tail; ds != nil; ds = ds.prev {
			s.Domains = append(s.Domains, snapDomain{Name: ds.name, Hosts: keysOf(ds.hosts), Count: ds.count,
				Full: ds.full, Minted: maps.Clone(ds.minted)})
		}
		sh.mu.Unlock()
	}
	if err := gob.NewEncoder(w).Encode(&s); err != nil {
		return fmt.Errorf("trap: snapshot: %w", err)
	}
	return nil
}

// Restore reads a Snapshot into d, which should be new: what d learned
// already for a host or domain in the snapshot is replaced. The detector's
// bounds (Config.MaxHosts, MaxTrackedURLs) apply: the hosts used least
// recently are dropped first.
func (d *Detector) Restore(r io.Reader) error {
	defer d.changes.Add(1)
	var s snapshot
	if err := gob.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("trap: restore: %w", err)
	}
	if s.Version != snapshotVersion {
		return fmt.Errorf("trap: restore: snapshot version %d, want %d", s.Version, snapshotVersion)
	}
	for _, x := range s.Domains {
		sh := &d.domains[shardOf(x.Name)]
		sh.mu.Lock()
		ds := sh.domain(x.Name)
		ds.hosts, ds.count, ds.full, ds.minted = setOf(x.Hosts), x.Count, x.Full, x.Minted
		if ds.hosts == nil {
			ds.hosts = map[uint64]struct{}{}
		}
		sh.mu.Unlock()
	}
	for _, x := range s.Hosts {
		sh := &d.hosts[shardOf(x.Name)]
		sh.mu.Lock()
		if old, ok := sh.m[x.Name]; ok {
			sh.evict(old)
		}
		hs := &hostState{name: x.Name, budgets: x.Budgets, refused: x.Refused, full: x.Full,
			urls: setOf(x.URLs), accepted: x.Accepted, patterns: x.Patterns,
			params: valueSets(x.Params), steps: valueSets(x.Steps), repeats: valueSets(x.Repeats),
			growth: x.Growth, grown: setOf(x.Grown), flagged: setOf(x.Flagged),
			marks: x.Marks, hostWide: restoreContent(x.HostWide), stopped: x.Stopped}
		if len(x.Content) > 0 {
			hs.content = make(map[uint64]*contentStats, len(x.Content))
			for k, c := range x.Content {
				cs := restoreContent(c)
				hs.content[k] = &cs
			}
		}
		sh.m[hs.name] = hs
		sh.pushFront(hs)
		sh.urls += len(hs.urls)
		for len(sh.m) > sh.maxHosts && sh.tail != hs {
			sh.evict(sh.tail)
		}
		sh.trim(hs)
		sh.mu.Unlock()
	}
	return nil
}
