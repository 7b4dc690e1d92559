package crawlkit

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"sync"
)

// CSVWriter writes the fields a Handler scrapes as CSV rows (RFC 4180),
// safely from the crawl's concurrent workers: the header once, then one
// row per Write, with the columns in the order given. It is the CSV
// counterpart of JSONLSink for what the Handler extracts rather than the
// page itself.
type CSVWriter struct {
	mu      sync.Mutex
	w       *csv.Writer
	columns []string
	index   map[string]int
	row     []string
}

// NewCSVWriter writes the header row of columns to w. Column names must
// be distinct and non-empty.
func NewCSVWriter(w io.Writer, columns ...string) (*CSVWriter, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("%w: CSVWriter needs at least one column", ErrConfig)
	}
	c := &CSVWriter{w: csv.NewWriter(w), columns: slices.Clone(columns), index: map[string]int{}, row: make([]string, len(columns))}
	for i, name := range columns {
		if name == "" {
			return nil, fmt.Errorf("%w: CSVWriter column %d has no name", ErrConfig, i)
		}
		if _, dup := c.index[name]; dup {
			return nil, fmt.Errorf("%w: CSVWriter column %q given twice", ErrConfig, name)
		}
		c.index[name] = i
	}
	if err := c.w.Write(c.columns); err != nil {
		return nil, err
	}
	return c, nil
}

// Write appends one row: each column's value from fields, empty where
// fields has none. A field that names no column is an error, and nothing
// is written, so a misspelt name does not lose its values in silence.
func (c *CSVWriter) Write(fields map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.row)
	for k, v := range fields {
		i, ok := c.index[k]
		if !ok {
			return fmt.Errorf("crawlkit: CSVWriter: field %q is not one of the columns %q", k, c.columns)
		}
		c.row[i] = v
	}
	return c.w.Write(c.row)
}

// Flush writes the buffered rows to the underlying writer.
func (c *CSVWriter) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Flush()
	return c.w.Error()
}
