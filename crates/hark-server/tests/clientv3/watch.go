// A watcher written against etcd's Go client (go.etcd.io/etcd/client/v3, at
// the version go.mod pins), for Hark's cluster tests: it watches a
// prefix from a revision through every endpoint given and prints one line
// per event, "<mod_revision> <key>", until it is killed. clientv3 itself
// moves the watch to another endpoint when its member dies and resumes it
// after the last revision it delivered.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func main() {
	endpoints := flag.String("endpoints", "127.0.0.1:2379", "comma-separated client URLs")
	prefix := flag.String("prefix", "", "key prefix to watch")
	rev := flag.Int64("rev", 1, "revision to watch from")
	flag.Parse()

	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(*endpoints, ","),
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "connect: %v\n", err)
		os.Exit(2)
	}
	defer cli.Close()

	watch := cli.Watch(context.Background(), *prefix,
		clientv3.WithPrefix(), clientv3.WithRev(*rev), clientv3.WithCreatedNotify())
	for resp := range watch {
		if err := resp.Err(); err != nil {
			fmt.Fprintf(os.Stderr, "watch: %v\n", err)
			os.Exit(3)
		}
		if resp.Created {
			fmt.Println("READY")
		}
		for _, ev := range resp.Events {
			fmt.Printf("%d %s\n", ev.Kv.ModRevision, ev.Kv.Key)
		}
	}
	fmt.Fprintln(os.Stderr, "watch channel closed")
	os.Exit(4)
}
