package statetest

import (
	"bytes"
	"context"
	"sync"
)

// Memory is a StateStore in one process's memory, for tests of code that
// takes a crawlkit.StateStore. Its zero value is empty and ready.
type Memory struct {
	mu      sync.Mutex
	records map[string][]byte
}

// UpdateState replaces the record name with update(its value) under the
// store's lock.
func (m *Memory) UpdateState(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, err := update(bytes.Clone(m.records[name]))
	if err != nil {
		return err
	}
	if m.records == nil {
		m.records = map[string][]byte{}
	}
	m.records[name] = bytes.Clone(v)
	return nil
}
