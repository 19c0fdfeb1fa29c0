package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cairn-dev/cairn/server"
)

func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return fmt.Errorf("not built yet")
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_ = server.Version
	return fmt.Errorf("not built yet")
}
