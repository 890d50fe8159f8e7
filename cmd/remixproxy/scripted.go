package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/remixproxy/remixproxy/agent/scripted"
)

// runScriptedModel serves the scripted model (agent/scripted) so the chat panel can be tried
// without a model account: `remixproxy scripted-model [--listen ADDR] [SCRIPT.json]`, then
// `remixproxy run --model-url http://ADDR/v1`. Without a script it replays the demo.
func runScriptedModel(args []string) error {
	fs := flag.NewFlagSet("remixproxy scripted-model", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8787", "address to serve the scripted model on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	script := scripted.Demo()
	name := "the built-in demo"
	switch fs.NArg() {
	case 0:
	case 1:
		b, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			return fmt.Errorf("reading script: %w", err)
		}
		if script, err = scripted.ParseScript(b); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		name = fs.Arg(0)
	default:
		return fmt.Errorf("scripted-model takes at most one script file (see remixproxy scripted-model -h)")
	}
	srv := scripted.New(script)
	url, stop, err := srv.Start(*listen)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("Scripted model replaying %s on %s\n", name, url)
	fmt.Printf("Point the proxy at it:  remixproxy run --model-url %s/v1\n", url)
	fmt.Printf("Every chat message takes the next turn; restart this command to start the script again.\n")
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	return nil
}
