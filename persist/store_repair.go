package persist

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/y"
)

// Report is what Check and Repair found in a store directory.
type Report struct {
	// Dir is the store's directory.
	Dir string
	// Damage says, one line each, what makes Open refuse the store: a
	// damaged badger file, a committed data file no manifest names, an
	// interrupted repair. Empty for a store that opens.
	Damage []string
	// Checkpoints are the manifests of the intact checkpoints (every
	// record and payload matches the manifest's checksums), by ascending
	// id.
	Checkpoints []Manifest
	// Nets are the names of the intact nets, sorted.
	Nets []string
	// Lost says, one line each, what cannot be salvaged: the checkpoints
	// and nets whose data is damaged or missing (with why), and the data
	// files that belong to no intact checkpoint in a damaged store.
	Lost []string
	// LostCheckpoints are the ids of the checkpoints Lost names.
	LostCheckpoints []int64
	// Moved is where Repair moved badger's old files and the data files it
	// did not keep (a directory in the store's directory); empty for Check
	// and when Repair changed nothing.
	Moved string
}

// Healthy reports whether the store opens and every checkpoint and net in
// it is intact.
func (r *Report) Healthy() bool { return len(r.Damage) == 0 && len(r.Lost) == 0 }

// CheckpointIDs returns the ids of the intact checkpoints.
func (r *Report) CheckpointIDs() []int64 {
	ids := make([]int64, len(r.Checkpoints))
	for i, m := range r.Checkpoints {
		ids[i] = m.ID
	}
	return ids
}

// String formats the report for people, a line per finding.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store %s\n", r.Dir)
	for _, d := range r.Damage {
		fmt.Fprintf(&b, "damaged: %s\n", d)
	}
	fmt.Fprintf(&b, "intact checkpoints (%d): %s\n", len(r.Checkpoints), idList(r.CheckpointIDs()))
	fmt.Fprintf(&b, "intact nets (%d): %s\n", len(r.Nets), listOrNone(r.Nets))
	for _, l := range r.Lost {
		fmt.Fprintf(&b, "lost: %s\n", l)
	}
	if r.Moved != "" {
		fmt.Fprintf(&b, "the old badger files and the data files not kept are in %s\n", r.Moved)
	}
	return b.String()
}

// Check examines the store in dir without changing it: badger's files as
// Open verifies them, and every checkpoint and net that can be read from
// what is intact in them and in the checkpoints' data files (whose
// trailers hold a copy of each save's records and manifest), each
// checkpoint verified in full against its checksums. It takes no lock: a
// store that another process is writing may show what that process is in
// the middle of.
func Check(dir string) (*Report, error) {
	sv, err := salvageStore(dir)
	if err != nil {
		return nil, err
	}
	return sv.report(), nil
}

// Repair salvages the store in dir: it does what Check does and, unless
// the store is healthy, writes the intact checkpoints and nets into fresh
// badger files, record for record as they were saved, and moves badger's
// old files and the data files of what was not salvaged into a directory
// named damaged-<time> in dir (deleting nothing). A repair that was
// interrupted is finished by the next one. Repair holds the store's lock:
// a store that a process has open is an error wrapping ErrLocked. The
// report says what was recovered and what was lost.
func Repair(dir string) (*Report, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("persist: Repair: %w", err)
	}
	unlock, held, err := lockStoreDir(dir)
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("persist: Repair: locking %q: %w", dir, err)
	}
	if !held {
		unlock()
		return nil, fmt.Errorf("persist: Repair: store %q: this system's build cannot lock a store directory, which Repair needs", dir)
	}
	report, err := repairLocked(dir)
	unlock()
	if err != nil || report.Moved == "" {
		return report, err
	}
	// The repaired store opens, and holds what the report says.
	s, err := Open(dir)
	if err != nil {
		return report, fmt.Errorf("persist: Repair: the repaired store does not open: %w", err)
	}
	defer s.Close()
	ms, err := s.Checkpoints()
	if err != nil {
		return report, fmt.Errorf("persist: Repair: listing the repaired store's checkpoints: %w", err)
	}
	if len(ms) != len(report.Checkpoints) {
		return report, fmt.Errorf("persist: Repair: the repaired store lists %d checkpoints, %d were salvaged", len(ms), len(report.Checkpoints))
	}
	return report, nil
}

// Repair's files in the store's directory: the badger store it builds, the
// same once complete (with the plan of what to move), and, in it, the mark
// that the old files were moved.
const (
	repairBuildName = "repair.tmp"
	repairReadyName = "repair.ready"
	repairPlanName  = "PLAN.json"
	repairMovedMark = "MOVED"
)

// repairPlan is what a repair moves once its badger files are built; it
// is written before anything is moved, so that an interrupted repair is
// finished by the next.
type repairPlan struct {
	// Moved is the directory (in the store's) for the old files.
	Moved string `json:"moved"`
	// Keep renames data files that a salvaged checkpoint uses but that are
	// named .pending or .deleted to .data.
	Keep map[string]string `json:"keep"`
	// SetAside are the data files to move.
	SetAside []string `json:"set_aside"`
	// Report is the report of the repair.
	Report *Report `json:"report"`
}

func repairLocked(dir string) (*Report, error) {
	if _, err := os.Stat(filepath.Join(dir, repairReadyName)); err == nil {
		return finishRepair(dir)
	}
	report, err := prepareRepair(dir)
	if err != nil || report.Moved == "" {
		return report, err
	}
	return finishRepair(dir)
}

// prepareRepair salvages the store in dir and, unless it is healthy, builds
// the repaired badger files and the plan of what to move in
// dir/repair.ready; the report's Moved is then set.
func prepareRepair(dir string) (*Report, error) {
	sv, err := salvageStore(dir)
	if err != nil {
		return nil, err
	}
	report := sv.report()
	if report.Healthy() {
		return report, nil
	}
	build := filepath.Join(dir, repairBuildName)
	if err := os.RemoveAll(build); err != nil {
		return report, fmt.Errorf("persist: Repair: removing an unfinished repair's files: %w", err)
	}
	if err := sv.write(build); err != nil {
		return report, fmt.Errorf("persist: Repair: store %q: writing the salvaged checkpoints: %w", dir, err)
	}
	plan := repairPlan{Moved: "damaged-" + time.Now().UTC().Format("20060102T150405.000Z"), Keep: map[string]string{}, Report: report}
	used := map[string]bool{}
	for _, c := range sv.ckpts {
		if c.file != nil {
			used[c.file.name()] = true
			if c.file.state != stateData {
				plan.Keep[c.file.name()] = dataFileName(c.file.id, c.file.gen)
			}
		}
	}
	for _, refs := range sv.files {
		for _, f := range refs {
			if !used[f.name()] {
				plan.SetAside = append(plan.SetAside, f.name())
			}
		}
	}
	slices.Sort(plan.SetAside)
	report.Moved = filepath.Join(dir, plan.Moved)
	b, err := json.MarshalIndent(plan, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(build, repairPlanName), b, 0o644)
	}
	if err == nil {
		err = syncDir(build)
	}
	if err == nil {
		err = os.Rename(build, filepath.Join(dir, repairReadyName))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		report.Moved = ""
		return report, fmt.Errorf("persist: Repair: store %q: %w", dir, err)
	}
	return report, nil
}

// finishRepair moves the old files out of dir and the repaired badger
// files in, as the plan in dir/repair.ready says.
func finishRepair(dir string) (*Report, error) {
	ready := filepath.Join(dir, repairReadyName)
	b, err := os.ReadFile(filepath.Join(ready, repairPlanName))
	var plan repairPlan
	if err == nil {
		err = json.Unmarshal(b, &plan)
	}
	if err != nil || plan.Report == nil || plan.Moved == "" || strings.ContainsAny(plan.Moved, `/\`) {
		return nil, fmt.Errorf("persist: Repair: store %q: the plan of the interrupted repair in %s is unreadable (%v): %w", dir, ready, err, ErrCorrupt)
	}
	report := plan.Report
	moved := filepath.Join(dir, plan.Moved)
	report.Moved = moved
	fail := func(err error) (*Report, error) {
		return report, fmt.Errorf("persist: Repair: store %q: moving files: %w (run Repair again to finish)", dir, err)
	}
	if _, err := os.Stat(filepath.Join(ready, repairMovedMark)); err != nil {
		// Nothing of the repaired store was moved in yet: every badger
		// file in dir is an old one.
		if err := os.MkdirAll(filepath.Join(moved, dataDirName), 0o755); err != nil {
			return fail(err)
		}
		fs, err := listStoreFiles(dir)
		if err != nil {
			return fail(err)
		}
		var old []string
		for _, p := range fs.tables {
			old = append(old, filepath.Base(p))
		}
		for _, p := range fs.mems {
			old = append(old, filepath.Base(p))
		}
		for _, p := range fs.vlogs {
			old = append(old, filepath.Base(p))
		}
		old = append(old, fs.other...)
		old = append(old, fs.irregular...)
		if fs.manifest {
			old = append(old, manifestFileName)
		}
		for _, name := range old {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(moved, name)); err != nil {
				return fail(err)
			}
		}
		data := filepath.Join(dir, dataDirName)
		for _, name := range plan.SetAside {
			if err := os.Rename(filepath.Join(data, name), filepath.Join(moved, dataDirName, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(err)
			}
		}
		for from, to := range plan.Keep {
			if _, _, _, ok := parseDataFileName(from); !ok {
				continue
			}
			if _, _, _, ok := parseDataFileName(to); !ok {
				continue
			}
			if err := os.Rename(filepath.Join(data, from), filepath.Join(data, to)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(err)
			}
		}
		for _, d := range []string{data, filepath.Join(moved, dataDirName), moved, dir} {
			if err := syncDir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(err)
			}
		}
		if err := os.WriteFile(filepath.Join(ready, repairMovedMark), nil, 0o644); err != nil {
			return fail(err)
		}
		if err := syncDir(ready); err != nil {
			return fail(err)
		}
	}
	entries, err := os.ReadDir(ready)
	if err != nil {
		return fail(err)
	}
	for _, e := range entries {
		if name := e.Name(); name != repairPlanName && name != repairMovedMark {
			if err := os.Rename(filepath.Join(ready, name), filepath.Join(dir, name)); err != nil {
				return fail(err)
			}
		}
	}
	if err := syncDir(dir); err != nil {
		return fail(err)
	}
	if err := os.RemoveAll(ready); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		return fail(err)
	}
	return report, nil
}

// A salvage is what salvageStore found in a store directory.
type salvage struct {
	dir    string
	damage []string
	// kv is the latest version of every key of this package that badger's
	// intact files hold.
	kv    map[string]*kvVersion
	files map[int64][]dataFileRef
	ckpts []*salvaged // intact, by ascending id
	nets  map[string][]byte
	lost  []string
	// lostIDs are the checkpoints that lost says are lost.
	lostIDs []int64
}

// kvVersion is a version of a key: the value, or a deletion, or why the
// value cannot be read.
type kvVersion struct {
	ts      uint64
	deleted bool
	value   []byte
	bad     string
}

// salvaged is an intact checkpoint: its manifest as stored (sealed), its
// records, and its data file.
type salvaged struct {
	m        *manifestWire
	manifest []byte
	records  map[string][]byte
	file     *dataFileRef
}

// salvageStore reads what is intact in the store in dir.
func salvageStore(dir string) (*salvage, error) {
	damage, err := storeFileDamage(dir)
	if err != nil {
		return nil, fmt.Errorf("persist: store %q: %w", dir, err)
	}
	sv := &salvage{dir: dir, damage: damage, kv: map[string]*kvVersion{}, nets: map[string][]byte{}}
	if err := sv.readBadger(); err != nil {
		return nil, fmt.Errorf("persist: store %q: %w", dir, err)
	}
	if sv.files, err = listDataFiles(dir); err != nil {
		return nil, fmt.Errorf("persist: store %q: listing the data files: %w", dir, err)
	}
	sv.salvageCheckpoints()
	sv.salvageNets()
	return sv, nil
}

// readBadger collects the latest version of every key from the tables
// (all of them, whether MANIFEST lists them or not, skipping damaged
// blocks) and the memtable logs (every committed transaction, skipping
// damaged entries); values in the value log are read through their
// pointers.
func (sv *salvage) readBadger() error {
	fs, err := listStoreFiles(sv.dir)
	if err != nil {
		return err
	}
	vlogs := map[uint32]*mappedFile{}
	defer func() {
		for _, m := range vlogs {
			m.close()
		}
	}()
	for fid, path := range fs.vlogs {
		if m, err := mapFile(path); err == nil {
			vlogs[fid] = m
		}
	}
	add := func(key []byte, meta byte, value []byte) {
		if len(key) <= 8 {
			return
		}
		user := string(y.ParseKey(key))
		if !strings.HasPrefix(user, ckptPrefix) && !strings.HasPrefix(user, netPrefix) {
			return
		}
		v := &kvVersion{ts: y.ParseTs(key), deleted: meta&metaDelete != 0}
		if !v.deleted {
			if meta&metaValuePointer != 0 {
				v.value, v.bad = readPointer(vlogs, key, value)
			} else {
				v.value = bytes.Clone(value)
			}
		}
		if cur := sv.kv[user]; cur == nil || v.ts > cur.ts || (v.ts == cur.ts && cur.bad != "" && v.bad == "") {
			sv.kv[user] = v
		}
	}
	for _, id := range slices.Sorted(maps.Keys(fs.tables)) {
		data, err := os.ReadFile(fs.tables[id])
		if err != nil {
			continue
		}
		entries, _ := tableEntries(data, id)
		for _, e := range entries {
			add(e.key, e.meta, e.value)
		}
	}
	for _, path := range fs.mems {
		_ = withMapped(path, func(m *mappedFile) error {
			if checkLogHeader(m.data) != nil {
				return nil
			}
			for _, e := range salvageLog(m) {
				add(e.key, e.meta, e.value)
			}
			return nil
		})
	}
	return nil
}

// salvageLog returns the entries of every committed transaction of a log,
// going on after damaged entries.
func salvageLog(m *mappedFile) []logEntry {
	var entries []logEntry
	for off := int64(logHeaderSize); off < int64(len(m.data)); {
		sc := scanLogFrom(m, off)
		entries = append(entries, sc.entries...)
		if sc.resume == 0 {
			break
		}
		off = max(sc.resume, sc.failed+1)
	}
	return entries
}

// readPointer reads the value a value pointer of key points to in the
// value log; bad says why it cannot.
func readPointer(vlogs map[uint32]*mappedFile, key, ptr []byte) (value []byte, bad string) {
	if len(ptr) != 12 {
		return nil, fmt.Sprintf("a value pointer of %d bytes", len(ptr))
	}
	fid, n, off := binary.NativeEndian.Uint32(ptr), binary.NativeEndian.Uint32(ptr[4:]), binary.NativeEndian.Uint32(ptr[8:])
	m := vlogs[fid]
	if m == nil {
		return nil, fmt.Sprintf("its value is in the value log %06d.vlog, which is missing", fid)
	}
	if int64(off) >= int64(len(m.data)) {
		return nil, fmt.Sprintf("its value is at %d of %06d.vlog, past its end", off, fid)
	}
	e, _, err := decodeLogEntry(m.data, int64(off))
	if err != nil || e.end-e.offset != int64(n) || !bytes.Equal(e.key, key) {
		return nil, fmt.Sprintf("its value at %d of %06d.vlog is damaged", off, fid)
	}
	return bytes.Clone(e.value), ""
}

// salvageCheckpoints finds the intact checkpoints. For each id the
// candidates are the save that badger's latest manifest names, read from
// badger's records or from its data file's trailer, and the saves of its
// committed (.data) data files, read from their trailers; the newest that
// is intact wins. A save retires the previous save's data file (renames
// it .deleted) before it commits, so badger's manifest naming a retired
// file means that badger lost the newer commit.
func (sv *salvage) salvageCheckpoints() {
	ids := map[int64]bool{}
	for key := range sv.kv {
		if id, rest, ok := parseCkptKey(key); ok && rest == "manifest" {
			ids[id] = true
		}
	}
	for id := range sv.files {
		ids[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		c, why, fromFile := sv.salvageCheckpoint(id)
		switch {
		case c != nil && fromFile:
			sv.damage = append(sv.damage, fmt.Sprintf("checkpoint %d: %s; its data file %s holds an intact copy", id, strings.Join(why, "; "), c.file.name()))
			fallthrough
		case c != nil:
			sv.ckpts = append(sv.ckpts, c)
		case len(why) > 0:
			sv.lost = append(sv.lost, fmt.Sprintf("checkpoint %d: %s", id, strings.Join(why, "; ")))
			sv.lostIDs = append(sv.lostIDs, id)
		}
	}
}

// salvageCheckpoint salvages checkpoint id (see salvageCheckpoints). why
// says what failed; fromFile says the checkpoint had to be read from a
// data file's trailer.
func (sv *salvage) salvageCheckpoint(id int64) (c *salvaged, why []string, fromFile bool) {
	type candidate struct {
		m       *manifestWire
		sealed  []byte
		badger  bool
		file    *dataFileRef
		retired bool
	}
	var cands []candidate
	bm, sealed := sv.badgerManifest(id, &why)
	if bm != nil {
		f := sv.file(id, bm.Gen)
		cands = append(cands, candidate{m: bm, sealed: sealed, badger: true, file: f, retired: f != nil && f.state == stateDeleted})
	}
	st := &Store{path: sv.dir}
	trailers := map[uint64]*dataTrailer{}
	for _, f := range sv.files[id] {
		if f.state != stateData || !st.committedFile(f) || (bm != nil && f.gen == bm.Gen) {
			continue
		}
		tr, err := readDataTrailer(filepath.Join(sv.dir, dataDirName, f.name()), id, f.gen)
		var m *manifestWire
		if err == nil {
			if m, err = decodeManifest(tr.manifest, id); err == nil && m.Gen != f.gen {
				err = fmt.Errorf("the manifest in its trailer names generation %016x", m.Gen)
			}
		}
		if err != nil {
			why = append(why, fmt.Sprintf("data file %s: %v", f.name(), err))
			continue
		}
		trailers[f.gen] = tr
		cands = append(cands, candidate{m: m, sealed: tr.manifest, file: &f})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if a.retired != b.retired {
			if a.retired {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.m.UnixNano, a.m.UnixNano)
	})
	for _, cand := range cands {
		if cand.badger {
			records, err := sv.verify(cand.m, func(key string) (*kvVersion, bool) { v, ok := sv.kv[key]; return v, ok }, cand.file)
			if err == nil {
				return &salvaged{m: cand.m, manifest: cand.sealed, records: records, file: cand.file}, why, false
			}
			why = append(why, fmt.Sprintf("the save badger's manifest names (generation %016x): %v", cand.m.Gen, err))
			if cand.file == nil {
				continue
			}
			tr, err := readDataTrailer(filepath.Join(sv.dir, dataDirName, cand.file.name()), id, cand.m.Gen)
			if err != nil {
				why = append(why, fmt.Sprintf("data file %s: %v", cand.file.name(), err))
				continue
			}
			trailers[cand.m.Gen] = tr
		}
		records, err := sv.verify(cand.m, trailerLookup(trailers[cand.m.Gen]), cand.file)
		if err != nil {
			why = append(why, fmt.Sprintf("data file %s: %v", cand.file.name(), err))
			continue
		}
		if len(why) == 0 {
			why = []string{"badger has no manifest for it"}
			if bm != nil {
				why = []string{fmt.Sprintf("badger's manifest names the older save %016x, whose data file is retired", bm.Gen)}
			}
		}
		return &salvaged{m: cand.m, manifest: cand.sealed, records: records, file: cand.file}, why, true
	}
	return nil, why, false
}

// badgerManifest returns badger's latest manifest of checkpoint id and its
// sealed bytes, or nil when there is none or it is damaged (appending to
// why).
func (sv *salvage) badgerManifest(id int64, why *[]string) (*manifestWire, []byte) {
	v := sv.kv[manifestKey(id)]
	switch {
	case v == nil || v.deleted:
		return nil, nil
	case v.bad != "":
		*why = append(*why, "the manifest in badger: "+v.bad)
		return nil, nil
	}
	m, err := decodeManifest(v.value, id)
	if err != nil {
		*why = append(*why, fmt.Sprintf("the manifest in badger: %v", err))
		return nil, nil
	}
	return m, v.value
}

// file returns the data file of save gen of checkpoint id, in whatever
// state, or nil.
func (sv *salvage) file(id int64, gen uint64) *dataFileRef {
	for _, f := range sv.files[id] {
		if f.gen == gen {
			return &f
		}
	}
	return nil
}

// trailerLookup looks records up in a data file's trailer.
func trailerLookup(tr *dataTrailer) func(key string) (*kvVersion, bool) {
	byKey := make(map[string][]byte, len(tr.keys))
	for i, k := range tr.keys {
		byKey[k] = tr.values[i]
	}
	return func(key string) (*kvVersion, bool) {
		v, ok := byKey[key]
		return &kvVersion{value: v}, ok
	}
}

// verify reads the whole checkpoint m, its records through lookup and its
// payloads from its data file, checking every checksum, and returns its
// records.
func (sv *salvage) verify(m *manifestWire, lookup func(key string) (*kvVersion, bool), file *dataFileRef) (map[string][]byte, error) {
	records := map[string][]byte{}
	get := func(key string, fn func(v []byte) error) error {
		v, ok := lookup(key)
		switch {
		case !ok || v.deleted:
			return badger.ErrKeyNotFound
		case v.bad != "":
			return fmt.Errorf("record %q: %s", key, v.bad)
		}
		records[key] = v.value
		return fn(v.value)
	}
	man := m.manifest()
	values := make([]any, len(m.Blobs))
	for i, info := range man.Blobs {
		if info.InDataFile {
			continue
		}
		v, err := readBlob(get, m, info)
		if err != nil {
			return nil, fmt.Errorf("blob %q: %v", info.Name, err)
		}
		values[i] = v
	}
	if m.DataBytes > 0 {
		if file == nil {
			return nil, fmt.Errorf("data file %s is missing", dataFileName(m.ID, m.Gen))
		}
		if err := (&Store{path: sv.dir}).readDataFile(m, man.Blobs, values); err != nil {
			return nil, err
		}
	}
	return records, nil
}

// salvageNets finds the intact nets.
func (sv *salvage) salvageNets() {
	for key, v := range sv.kv {
		name, ok := strings.CutPrefix(key, netPrefix)
		if !ok || v.deleted {
			continue
		}
		if v.bad != "" {
			sv.lost = append(sv.lost, fmt.Sprintf("net %q: %s", name, v.bad))
			continue
		}
		body, err := unseal(v.value)
		if err == nil {
			_, err = netdef.UnmarshalNetDef(body)
		}
		if err != nil {
			sv.lost = append(sv.lost, fmt.Sprintf("net %q: %v", name, err))
			continue
		}
		sv.nets[name] = v.value
	}
}

// report returns the salvage's report. In a damaged store, the data files
// of saves that no intact checkpoint uses are listed as lost but for
// retired (.deleted) ones: a .pending file is an unfinished save or one
// whose commit badger lost.
func (sv *salvage) report() *Report {
	r := &Report{Dir: sv.dir, Damage: slices.Clone(sv.damage), Nets: slices.Sorted(maps.Keys(sv.nets)),
		Lost: slices.Clone(sv.lost), LostCheckpoints: slices.Clone(sv.lostIDs)}
	used := map[string]bool{}
	for _, c := range sv.ckpts {
		r.Checkpoints = append(r.Checkpoints, c.m.manifest())
		if c.file != nil {
			used[c.file.name()] = true
		}
	}
	st := &Store{path: sv.dir}
	for _, id := range slices.Sorted(maps.Keys(sv.files)) {
		for _, f := range sv.files[id] {
			if !used[f.name()] && f.state == stateData && st.committedFile(f) {
				r.Damage = append(r.Damage, fmt.Sprintf("data/%s: a committed save of checkpoint %d, but no intact manifest names it", f.name(), id))
			}
		}
	}
	if len(r.Damage) > 0 || len(r.Lost) > 0 {
		for _, id := range slices.Sorted(maps.Keys(sv.files)) {
			for _, f := range sv.files[id] {
				if !used[f.name()] && f.state != stateDeleted {
					r.Lost = append(r.Lost, fmt.Sprintf("data file %s: belongs to no intact checkpoint", f.name()))
				}
			}
		}
	}
	slices.Sort(r.Lost)
	return r
}

// write writes the salvaged checkpoints and nets into a new badger store
// in dir, byte for byte as they were stored.
func (sv *salvage) write(dir string) error {
	db, err := badger.Open(storeOptions(dir))
	if err != nil {
		return err
	}
	wb := db.NewWriteBatch()
	set := func(key string, v []byte) {
		if err == nil {
			err = wb.Set([]byte(key), v)
		}
	}
	for _, c := range sv.ckpts {
		for _, k := range slices.Sorted(maps.Keys(c.records)) {
			set(k, c.records[k])
		}
		set(manifestKey(c.m.ID), c.manifest)
	}
	for name, v := range sv.nets {
		set(netPrefix+name, v)
	}
	if err == nil {
		err = wb.Flush()
	} else {
		wb.Cancel()
	}
	if err == nil {
		err = db.Sync()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}
