package redis

import "github.com/crawlkit/crawlkit/storage/internal/settle"

// dbState is how the scripts spell a settled URL's state.
var dbState = map[settle.State]string{settle.Queued: "q", settle.Done: "d", settle.Failed: "f"}
