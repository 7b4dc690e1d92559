package frontierapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxResponseBytes bounds the body of a response the Client reads.
const MaxResponseBytes = 64 << 20

// Client is a Go client of the frontier service. It is safe for concurrent
// use. Errors from the service are *APIError values.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a Client of the service at baseURL ("http://host:port")
// that authenticates with token. A nil hc means http.DefaultClient; its
// Timeout, if any, must exceed the long-poll timeouts passed to Next.
func NewClient(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), token: token, hc: hc}
}

// Submit queues URLs (POST /api/v1/frontier/urls).
func (c *Client) Submit(ctx context.Context, req SubmitRequest) (SubmitResponse, error) {
	var resp SubmitResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/frontier/urls", req, &resp)
	return resp, err
}

// Next leases up to batchSize URLs for workerID, waiting up to timeout for
// the first (GET /api/v1/frontier/next). An empty response means nothing
// became ready in time.
func (c *Client) Next(ctx context.Context, workerID string, batchSize int, timeout time.Duration) (NextResponse, error) {
	q := url.Values{}
	q.Set("worker_id", workerID)
	q.Set("batch_size", strconv.Itoa(batchSize))
	q.Set("timeout_ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	var resp NextResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/frontier/next?"+q.Encode(), nil, &resp)
	return resp, err
}

// Results settles leased URLs (POST /api/v1/frontier/results).
func (c *Client) Results(ctx context.Context, req ResultsRequest) (ResultsResponse, error) {
	var resp ResultsResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/frontier/results", req, &resp)
	return resp, err
}

// Stats returns the service's figures (GET /api/v1/stats).
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var resp Stats
	err := c.do(ctx, http.MethodGet, "/api/v1/stats", nil, &resp)
	return resp, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("frontierapi: encoding request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("frontierapi: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("frontierapi: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("frontierapi: reading response of %s %s: %w", method, path, err)
	}
	if len(data) > MaxResponseBytes {
		return fmt.Errorf("frontierapi: response of %s %s exceeds %d bytes", method, path, MaxResponseBytes)
	}
	if resp.StatusCode/100 != 2 {
		apiErr := &APIError{StatusCode: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode)}
		var er ErrorResponse
		if json.Unmarshal(data, &er) == nil && er.Error != "" {
			apiErr.Code, apiErr.Message = er.Error, er.Message
		} else {
			apiErr.Message = strings.TrimSpace(string(data[:min(len(data), 200)]))
		}
		return apiErr
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("frontierapi: decoding response of %s %s: %w", method, path, err)
	}
	return nil
}
