package distributed

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RunResultsCommand is the results command (cmd/crawlresults): it writes
// the crawl's results stream to JSON Lines files in -out, each page once
// (ConsumeResults into a ResultsWriter), until ctx ends or, with
// -until-done, the crawl is finished; then it prints "results written=N
// skipped=M total=T" on stdout. Started again on the same -out, it goes on
// where it stopped. It lives in this package so that tests can run it in a
// child process and kill it.
func RunResultsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawlresults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	natsURL := fs.String("nats", "nats://127.0.0.1:4222", "NATS server URLs, comma-separated")
	crawlID := fs.String("crawl", "default", "crawl id")
	out := fs.String("out", "", "directory of the JSON Lines files (required)")
	durable := fs.String("durable", "jsonl", "consumer name; one writer per name and directory")
	replicas := fs.Int("replicas", 0, "results stream replicas, if this command creates it (0: by the cluster's size)")
	dupWindow := fs.Duration("dup-window", DefaultDuplicateWindow, "results stream duplicate window, if this command creates it")
	untilDone := fs.Bool("until-done", false, "exit once the crawl is finished and every result is written")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	w, err := OpenResultsWriter(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	nc, err := nats.Connect(*natsURL, nats.Name("crawlkit-results"), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", *natsURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready %d results in %s\n", w.Len(), *out)
	err = ConsumeResults(ctx, js, *crawlID, ResultsConfig{
		Durable: *durable, Replicas: *replicas, DuplicateWindow: *dupWindow, UntilDone: *untilDone,
	}, w.Write)
	fmt.Fprintf(stdout, "results written=%d skipped=%d total=%d\n", w.Written, w.Skipped, w.Len())
	return err
}
