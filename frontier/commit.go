package frontier

import (
	"context"
	"encoding/binary"
	"sync"
)

// pendingOp is one acknowledged operation (an Add or a settle) waiting for
// its durable write.
type pendingOp struct {
	nseq  int                                       // sequence numbers the op needs
	write func(seq uint64, m []Mutation) []Mutation // appends the op's mutations
	apply func(seq uint64)                          // memory effects after the write; f.mu held
	fail  func()                                    // undo after a failed write; f.mu held
	seq   uint64
	err   error
}

// group is a set of ops committed with one Store.Write.
type group struct {
	ops  []*pendingOp
	done chan struct{} // closed when the group's write and apply finished
	lead chan struct{} // receives one token when a waiter must run the group
}

// committer batches concurrent acknowledged operations into one store write
// each (group commit): while one group is being written, new operations
// gather in the next group; when the write finishes, one waiter of the next
// group runs it. One synced write then acknowledges every operation of its
// group, so throughput grows with the number of concurrent callers instead of
// being bounded by one fsync per call. Groups are written one at a time, in
// order, which also gives sequence numbers and memory updates a total order.
// No goroutine is started: a caller runs the write it waits for.
type committer struct {
	f *Frontier

	mu       sync.Mutex
	open     *group // group accepting ops; nil when none
	busy     bool   // a group is being written
	closed   bool
	inflight sync.WaitGroup

	seq uint64 // highest sequence number handed out; only the running leader touches it
}

// submit runs op through a group commit and returns its error.
func (c *committer) submit(op *pendingOp) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.inflight.Add(1)
	defer c.inflight.Done()
	g := c.open
	if g == nil {
		g = &group{done: make(chan struct{}), lead: make(chan struct{}, 1)}
		c.open = g
	}
	g.ops = append(g.ops, op)
	if !c.busy {
		c.busy = true
		c.open = nil
		c.mu.Unlock()
		c.run(g)
		return op.err
	}
	c.mu.Unlock()
	select {
	case <-g.done:
	case <-g.lead:
		c.run(g)
	}
	return op.err
}

// run writes g, applies it, and hands the next group to one of its waiters.
func (c *committer) run(g *group) {
	c.write(g.ops)
	close(g.done)
	c.mu.Lock()
	next := c.open
	if next == nil {
		c.busy = false
		c.mu.Unlock()
		return
	}
	c.open = nil
	c.mu.Unlock()
	next.lead <- struct{}{}
}

func (c *committer) write(ops []*pendingOp) {
	f := c.f
	var muts []Mutation
	for _, op := range ops {
		op.seq = c.seq + 1
		c.seq += uint64(op.nseq)
		muts = op.write(op.seq, muts)
	}
	muts = append(muts, Mutation{Key: metaSeqKey, Value: binary.BigEndian.AppendUint64(nil, c.seq)})
	err := f.store.Write(context.Background(), muts)
	f.mu.Lock()
	for _, op := range ops {
		if err != nil {
			op.err = err
			if op.fail != nil {
				op.fail()
			}
			continue
		}
		op.apply(op.seq)
	}
	f.appliedSeq = c.seq
	f.signal()
	f.mu.Unlock()
}

// close refuses new operations and waits for those in flight.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.inflight.Wait()
}
