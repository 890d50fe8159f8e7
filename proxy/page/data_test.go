package page

import (
	"fmt"
	"strings"
	"testing"
)

func TestSessionRecordBounds(t *testing.T) {
	var r sessionRecord
	for i := 0; i < 3*maxRecordedPerPage; i++ {
		r.add(RecordedResponse{URL: fmt.Sprint("https://x/", i), Body: "{}"})
	}
	if len(r.list) != maxRecordedPerPage || r.list[0].URL != fmt.Sprint("https://x/", 2*maxRecordedPerPage) {
		t.Errorf("kept %d, first %s", len(r.list), r.list[0].URL)
	}
	var big sessionRecord
	body := strings.Repeat("y", maxRecordedBody)
	for i := 0; i < 40; i++ {
		big.add(RecordedResponse{URL: "u", Body: body})
	}
	if big.bytes > maxRecordedTotal || len(big.list) != maxRecordedTotal/(maxRecordedBody+1) {
		t.Errorf("kept %d responses, %d bytes (limit %d)", len(big.list), big.bytes, maxRecordedTotal)
	}
}
