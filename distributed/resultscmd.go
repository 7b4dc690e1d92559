package distributed

import (
	"context"
	"flag"
	"fmt"
	"io"

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
	var conn NATSFlags
	conn.Register(fs)
	crawlID := fs.String("crawl", "default", "crawl id")
	out := fs.String("out", "", "directory of the JSON Lines files (required)")
	durable := fs.String("durable", "jsonl", "consumer name; one writer per name and directory")
	replicas := fs.Int("replicas", 0, "results stream replicas, if this command creates it (0: by the cluster's size)")
	dupWindow := fs.Duration("dup-window", DefaultDuplicateWindow, "results stream duplicate window, if this command creates it")
	untilDone := fs.Bool("until-done", false, "exit once the crawl is finished and every result is written")
	if err := fs.Parse(args); err != nil {
		return err
	}
	natsOpts, err := conn.Options()
	if err != nil {
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
	nc, err := connectNATS(conn.URL, "crawlkit-results", natsOpts)
	if err != nil {
		return err
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
