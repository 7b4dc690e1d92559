package crawlkit

import (
	"errors"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// dedupPanics is a Queue whose Deduplicates panics.
type dedupPanics struct{ *frontier.Frontier }

func (dedupPanics) Deduplicates() bool { panic("not ready") }

// TestNewRecoversDeduplicatesPanic checks that New reports a Queue whose
// Deduplicates panics as a config error naming the panic, instead of
// crashing the program.
func TestNewRecoversDeduplicatesPanic(t *testing.T) {
	f, err := frontier.New(frontier.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = New(Config{UserAgent: "crawlkit-test", Seeds: []string{"http://a.test/"}, Queue: dedupPanics{f}, Delay: 0})
	var pe *PanicError
	if !errors.Is(err, ErrConfig) || !errors.As(err, &pe) {
		t.Fatalf("New = %v, want ErrConfig wrapping a PanicError", err)
	}
}
