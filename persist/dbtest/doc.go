// Package dbtest checks a persist DB type against the contract of
// persist.DB, persist.Cursor and persist.Transaction, as testing/fstest
// checks an fs.FS. TestDB runs the checks for one registered DB type;
// persist's tests run it over every type in persist.DBTypes, so a package
// that registers a new DB type is checked once it is imported there.
//
// The contract, one subtest of TestDB each:
//
//   - RoundTrip: records put and committed into a new DB read back, after
//     the DB is closed and reopened for reading, with their keys and values
//     byte for byte (binary values, keys with '/', '#', NUL and UTF-8), in
//     key order when they were put in key order.
//   - Order: records put out of key order come back in the order they were
//     put or in key order, and in key order where the cursor can Seek.
//   - Cursor: a new cursor is at the first record; Next walks to the end,
//     where the cursor is invalid (Key "", Value nil) and Next is a no-op;
//     SeekToFirst rewinds; a closed cursor cannot move; Close is idempotent.
//   - Seek: where SupportsSeek, Seek lands on the first key at or after its
//     argument (an invalid cursor past the last key) and Next goes on from
//     there; elsewhere Seek fails with an error that wraps
//     persist.ErrSeekUnsupported and names the DB, and SeekToFirst still
//     works.
//   - Modes: ModeRead of a missing path fails naming it and creates
//     nothing; ModeWrite creates a missing DB and keeps the records of an
//     existing one; ModeNew empties an existing DB; a DB open for reading
//     takes no transactions.
//   - Reopen: a DB reads the same after being opened, read and closed
//     several times, and DBExists leaves it as it was.
//   - Empty: a new DB with no records (no transaction, or an empty one)
//     exists and has an invalid cursor that SeekToFirst, Next and Seek leave
//     invalid without error.
//   - LargeValues: values of 64 KiB − 1 to 5 MiB and a 1,000-byte key read
//     back intact (under TestDBLimits with a MaxKeyLen, a key of at most
//     MaxKeyLen bytes, and Put refuses a longer one naming the DB).
//   - ManyRecords: 10,000 records put with a Commit every 1,000 read back
//     in order.
//   - Transaction: Put copies its value and rejects empty keys and values,
//     with an error that names the DB; Commit can be called more than once;
//     Close commits what was put since the last Commit; Put and Commit fail
//     after Close; Close is idempotent.
//   - Close: Close is idempotent; a closed DB makes no cursors or
//     transactions, and its open cursors and transactions fail.
//   - NotADB: reading a file of garbage or a directory of other files fails
//     with an error that names the path, and opening the directory for
//     writing either fails naming it or leaves its files alone.
//
// WriteAll, ReadAll and Equal are the helpers the checks use, exported for
// the tests of DB types and of code built on them.
package dbtest
