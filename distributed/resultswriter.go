package distributed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// ResultsWriter appends Results to JSON Lines files in a directory, each
// ID at most once, across restarts: it is what makes ConsumeResults
// exactly-once. Messages are acknowledged only after Write returns, so a
// consumer killed between the two gets them again; the writer knows their
// IDs from its files and skips them.
//
// Opening reads every results-NNNNN.jsonl file in the directory for the
// IDs written so far (a line cut short by a crash is cut off the file),
// then starts the next file. One writer per directory at a time.
type ResultsWriter struct {
	dir  string
	f    *os.File
	seen map[string]struct{}
	// broken is the error of a failed write: the file may end in a
	// partial line, which only the next Open cuts off.
	broken error
	// Written counts lines written since Open; Skipped Results whose ID
	// was written before.
	Written, Skipped int
}

// resultsPattern names a ResultsWriter's files.
const resultsPattern = "results-%05d.jsonl"

// OpenResultsWriter opens dir (creating it) for appending Results.
func OpenResultsWriter(dir string) (*ResultsWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("distributed: results: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "results-*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	w := &ResultsWriter{dir: dir, seen: map[string]struct{}{}}
	last := 0
	for _, name := range files {
		var n int
		if _, err := fmt.Sscanf(filepath.Base(name), resultsPattern, &n); err != nil {
			continue
		}
		last = max(last, n)
		if err := w.load(name); err != nil {
			return nil, err
		}
	}
	name := filepath.Join(dir, fmt.Sprintf(resultsPattern, last+1))
	if w.f, err = os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("distributed: results: %w", err)
	}
	return w, nil
}

// load reads the IDs of one file, cutting off an incomplete last line.
func (w *ResultsWriter) load(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("distributed: results: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var good int64 // end of the last complete line
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				// Cut short by a crash before the fsync: it was never
				// acknowledged, so it comes again.
				if err := f.Truncate(good); err != nil {
					return fmt.Errorf("distributed: results: %s: %w", name, err)
				}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("distributed: results: %s: %w", name, err)
		}
		var id struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &id); err != nil || id.ID == "" {
			return fmt.Errorf("distributed: results: %s at byte %d: not a result line", name, good)
		}
		w.seen[id.ID] = struct{}{}
		good += int64(len(line))
	}
}

// Has reports whether a Result with id has been written.
func (w *ResultsWriter) Has(id string) bool { _, ok := w.seen[id]; return ok }

// Len is the number of distinct IDs written, by this writer and before.
func (w *ResultsWriter) Len() int { return len(w.seen) }

// Write appends the lines of Results (each one encoded Result) whose IDs
// are new, and syncs the file: when it returns nil, they are durable and
// their messages may be acknowledged. A batch repeating an ID writes it
// once.
func (w *ResultsWriter) Write(lines [][]byte) error {
	if w.broken != nil {
		return w.broken
	}
	var buf bytes.Buffer
	var added []string
	for _, line := range lines {
		var id struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &id); err != nil || id.ID == "" {
			return fmt.Errorf("distributed: results: not a Result: %.80q", line)
		}
		if _, dup := w.seen[id.ID]; dup {
			w.Skipped++
			continue
		}
		w.seen[id.ID] = struct{}{}
		added = append(added, id.ID)
		buf.Write(bytes.TrimRight(line, "\n"))
		buf.WriteByte('\n')
	}
	if buf.Len() == 0 {
		return nil
	}
	_, err := w.f.Write(buf.Bytes())
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		// Not durable: forget the IDs and refuse further writes; the
		// redeliveries are written after the next Open, which cuts a
		// partial line off.
		for _, id := range added {
			delete(w.seen, id)
		}
		w.broken = fmt.Errorf("distributed: results: %w", err)
		return w.broken
	}
	w.Written += len(added)
	return nil
}

// Close closes the current file.
func (w *ResultsWriter) Close() error { return w.f.Close() }
