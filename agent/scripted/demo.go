package scripted

import (
	_ "embed"
	"fmt"
)

//go:embed demo.json
var demoScript []byte

// Demo returns the script `remixproxy scripted-model` replays when given none: in Build mode it
// outlines the page, reads its address, writes a remixlet that outlines the headings of that
// site, and says what it did — the whole flow, offline, on any page.
func Demo() Script {
	s, err := ParseScript(demoScript)
	if err != nil {
		panic(fmt.Sprintf("scripted: the demo script does not parse: %v", err)) // the tests catch this
	}
	return s
}
