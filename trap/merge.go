package trap

import (
	"encoding/gob"
	"fmt"
	"io"
	"slices"
)

// Processes that share one crawl queue share their traps: a pattern one
// of them found to be a trap is a trap for all. Merge reads another
// detector's Snapshot (another process's, or a record the processes keep
// together) into d and keeps what either learned: the union of value sets,
// URL keys, stops and marks, the larger of counts, the smaller of the
// fewest parts a growing parameter was seen with, and the content groups
// with more reports. Merging is idempotent and order-free, so a shared
// record each process merges into and writes back (see Snapshot) holds the
// learning of them all. Verdicts taken from another detector are never
// marked First: the process that reached them reported them.
func (d *Detector) Merge(r io.Reader) error {
	defer d.changes.Add(1)
	var s snapshot
	if err := gob.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("trap: merge: %w", err)
	}
	if s.Version != snapshotVersion {
		return fmt.Errorf("trap: merge: snapshot version %d, want %d", s.Version, snapshotVersion)
	}
	for _, x := range s.Domains {
		sh := &d.domains[shardOf(x.Name)]
		sh.mu.Lock()
		ds := sh.domain(x.Name)
		for _, h := range x.Hosts {
			ds.hosts[h] = struct{}{}
		}
		ds.count = max(ds.count, x.Count)
		ds.full = ds.full || x.Full
		ds.minted = mergeMax(ds.minted, x.Minted)
		sh.mu.Unlock()
	}
	for i := range s.Hosts {
		x := &s.Hosts[i]
		sh := &d.hosts[shardOf(x.Name)]
		sh.mu.Lock()
		hs, ok := sh.m[x.Name]
		if !ok {
			hs = &hostState{name: x.Name, budgets: x.Budgets}
			sh.m[hs.name] = hs
			sh.pushFront(hs)
		}
		n := len(hs.urls)
		mergeHost(hs, x)
		sh.urls += len(hs.urls) - n
		for len(sh.m) > sh.maxHosts && sh.tail != hs {
			sh.evict(sh.tail)
		}
		sh.trim(hs)
		sh.mu.Unlock()
	}
	return nil
}

// mergeHost merges x into hs (see Merge).
func mergeHost(hs *hostState, x *snapHost) {
	if !hs.refused.Rejected() && x.Refused.Rejected() {
		hs.refused = later(x.Refused)
	}
	if !hs.stopped.Rejected() && x.Stopped.Rejected() {
		hs.stopped = later(x.Stopped)
	}
	hs.full = hs.full || x.Full
	hs.accepted = max(hs.accepted, x.Accepted)
	hs.urls = mergeSet(hs.urls, x.URLs)
	hs.patterns = mergeMax(hs.patterns, x.Patterns)
	hs.params = mergeValues(hs.params, x.Params)
	hs.steps = mergeValues(hs.steps, x.Steps)
	hs.repeats = mergeValues(hs.repeats, x.Repeats)
	for k, v := range x.Growth {
		if hs.growth == nil {
			hs.growth = make(map[uint64]int32)
		}
		if old, ok := hs.growth[k]; !ok || v < old {
			hs.growth[k] = v
		}
	}
	hs.grown = mergeSet(hs.grown, x.Grown)
	hs.flagged = mergeSet(hs.flagged, x.Flagged)
	for k, v := range x.Marks {
		if hs.marks == nil {
			hs.marks = make(map[uint64]Verdict)
		}
		if _, ok := hs.marks[k]; !ok {
			hs.marks[k] = later(v)
		}
	}
	if x.HostWide.Reports > hs.hostWide.reports {
		hs.hostWide = restoreContent(x.HostWide)
	}
	for k, c := range x.Content {
		if hs.content == nil {
			hs.content = make(map[uint64]*contentStats)
		}
		if old, ok := hs.content[k]; !ok || c.Reports > old.reports {
			cs := restoreContent(c)
			hs.content[k] = &cs
		}
	}
}

func mergeSet(m map[uint64]struct{}, keys []uint64) map[uint64]struct{} {
	if len(keys) > 0 && m == nil {
		m = make(map[uint64]struct{}, len(keys))
	}
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

func mergeMax(m, other map[uint64]int32) map[uint64]int32 {
	if len(other) > 0 && m == nil {
		m = make(map[uint64]int32, len(other))
	}
	for k, v := range other {
		m[k] = max(m[k], v)
	}
	return m
}

func mergeValues(m map[uint64]*valueSet, other map[uint64]snapValues) map[uint64]*valueSet {
	if len(other) > 0 && m == nil {
		m = make(map[uint64]*valueSet, len(other))
	}
	for k, o := range other {
		s, ok := m[k]
		if !ok {
			m[k] = &valueSet{v: slices.Clone(o.V), crossed: o.Crossed, stopped: o.Stopped}
			continue
		}
		for _, v := range o.V {
			if !s.has(v) {
				s.v = append(s.v, v)
			}
		}
		s.crossed = s.crossed || o.Crossed
		s.stopped = s.stopped || o.Stopped
	}
	return m
}
