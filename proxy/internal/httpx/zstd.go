package httpx

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/remixproxy/remixproxy/internal/budget"
)

// zstd decoders under a budget. A zstd decoder holds its frame's window (up to the 8 MiB
// browsers decode) for as long as its body streams, and a hostile upstream can declare the
// largest window and then send nothing more: one decoder per response in flight, bounded
// before only by the browser's connections to the proxy (32 in Chromium, ~270 MiB; pass 4b).
// Each decoder now reserves its window from one budget for the whole proxy before it starts,
// and a body whose window does not fit fails to decode (a read error: the response ends) —
// a hostile upstream can so make other sites' zstd documents fail while it holds the budget,
// not grow the proxy's memory.

const (
	// zstdMaxWindow is the largest window a frame may declare: browsers decode at most 8 MiB
	// (RFC 9659), and so does the proxy.
	zstdMaxWindow = 8 << 20
	// zstdMinReserve is the least a decoder reserves: later frames of the body may use up to
	// this (or the first frame's window, when larger).
	zstdMinReserve = 1 << 20
	// ZstdBudget bounds the windows of the zstd decoders alive at once, for the whole proxy.
	ZstdBudget = 64 << 20
)

// zstdWindows is the budget's account.
var zstdWindows = budget.New(ZstdBudget)

// ZstdInUse is how much of ZstdBudget the live decoders hold (for tests).
func ZstdInUse() int64 {
	return zstdWindows.InUse()
}

// openZstd starts a zstd decoder over r: it reads the first frame's header, refuses a window
// over zstdMaxWindow, and reserves the window (at least zstdMinReserve) from the budget; the
// decoder then refuses any later frame whose window is larger than what it reserved. release
// gives the reservation back (after the decoder is closed).
func openZstd(r io.Reader) (dec *zstd.Decoder, release func(), err error) {
	br := bufio.NewReaderSize(r, 64)
	head, _ := br.Peek(zstd.HeaderMaxSize)
	var h zstd.Header
	window := uint64(zstdMaxWindow) // a skippable frame first, or a header not read: the most
	if err := h.Decode(head); err == nil && !h.Skippable {
		window = h.WindowSize
		if h.SingleSegment {
			window = h.FrameContentSize
		}
		if window > zstdMaxWindow {
			return nil, nil, fmt.Errorf("decoding zstd body: the frame declares a window of %d bytes, over the %d MiB browsers decode", window, zstdMaxWindow>>20)
		}
	}
	reserve := int64(max(window, zstdMinReserve))
	if !zstdWindows.Take(reserve) {
		return nil, nil, fmt.Errorf("decoding zstd body: the proxy's zstd decoders hold their budget of %d MiB (another %d KiB asked)", ZstdBudget>>20, reserve>>10)
	}
	zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(reserve)),
		zstd.WithDecoderMaxMemory(uint64(reserve)), zstd.WithDecoderLowmem(true))
	if err != nil {
		zstdWindows.Give(reserve)
		return nil, nil, fmt.Errorf("decoding zstd body: %w", err)
	}
	var once sync.Once
	return zr, func() { once.Do(func() { zstdWindows.Give(reserve) }) }, nil
}
