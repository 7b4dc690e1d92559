package crawlkit_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

func TestCSVWriter(t *testing.T) {
	var buf bytes.Buffer
	w, err := crawlkit.NewCSVWriter(&buf, "url", "title", "price")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Write(map[string]string{"url": fmt.Sprintf("http://s.test/%d", i), "title": "a, \"quoted\"\nline", "price": "1"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.Write(map[string]string{"prise": "2"}); err == nil {
		t.Error("a field that names no column was accepted")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 51 || rows[0][2] != "price" || rows[1][1] != "a, \"quoted\"\nline" {
		t.Errorf("read back %d rows, first %q %q", len(rows), rows[0], rows[1])
	}
	for _, cols := range [][]string{nil, {"a", "a"}, {""}} {
		if _, err := crawlkit.NewCSVWriter(&buf, cols...); !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("columns %q: %v, want ErrConfig", cols, err)
		}
	}
}

func ExampleCSVWriter() {
	w, _ := crawlkit.NewCSVWriter(os.Stdout, "url", "title", "price")
	// In a Handler: p.Each("div.product", ...) and then
	w.Write(map[string]string{"url": "http://shop.test/p/1", "title": "Teapot", "price": "12.50"})
	w.Write(map[string]string{"url": "http://shop.test/p/2", "title": "Café, set"})
	w.Flush()
	// Output:
	// url,title,price
	// http://shop.test/p/1,Teapot,12.50
	// http://shop.test/p/2,"Café, set",
}
