package postgres

import "github.com/crawlkit/crawlkit/storage/internal/settle"

// dbState is how the urls table spells a settled URL's state.
var dbState = map[settle.State]int16{settle.Queued: 0, settle.Done: 2, settle.Failed: 3}
