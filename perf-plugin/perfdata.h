/*
 * perfdata.h - what the plugin reads from the perf.data file itself, next
 * to the samples perf hands it: whether the file is whole, the time of its
 * last sample, how many events perf lost while recording, and what each
 * process is called.
 *
 *	GError *err = NULL;
 *	struct perfdata *pd = perfdata_read(fd, "perf.data", &err);
 *	if (!pd)
 *		...not a perf.data file this code can read: err says why...
 *	else if (perfdata_damage(pd))
 *		...cut short or corrupt: perf would stop part-way...
 *	bool from_exe;
 *	const char *name = perfdata_process_name(pd, 4242, &from_exe);
 *	perfdata_free(pd);
 *
 * The layout (perf's Documentation/perf.data-file-format.txt): a header
 * (the magic "PERFILE2", the offset and size of the data section, a bitmap
 * of the feature sections), the data section, a run of records each with
 * an 8-byte header (u32 type, u16 misc, u16 size), then the feature
 * sections, found through a table of {offset, size} just after the data.
 * A file written to a pipe (perf record -o -) has a 16-byte header and
 * records up to its end.  Only files in this machine's byte order are read
 * (perf record writes its own machine's).
 *
 * Whole means: the file is as long as its header says the data section is;
 * that size is not 0 (perf record writes it when it finishes); and the
 * section is a run of whole records, each at least 8 bytes (more for the
 * kinds read here), none running past its end, none of type 0.  perf stops
 * with "failed to process type" at the first record that is not, after
 * handing over part of the samples (or skips a record of type 0).
 *
 * Names: a process is named after its main thread (pid == tid), under the
 * thread's last name in the recording (PERF_RECORD_COMM, inherited through
 * PERF_RECORD_FORK); failing that, after the file of its first executable
 * mapping since its last exec (PERF_RECORD_MMAP, MMAP2), with *from_exe
 * set.  What a FORK passes on never replaces what the thread's own records
 * say, wherever they are in the file (perf writes one CPU's records after
 * another's, so a child's can come first).  A pid reused within the
 * recording keeps the first process's name unless the second one names
 * itself.  Records compressed by perf record -z cannot be read here
 * (perfdata_compressed()): no names then.
 *
 * Switches: perf record --switch-events writes a record at each context
 * switch (PERF_RECORD_SWITCH_CPU_WIDE with -a, PERF_RECORD_SWITCH per
 * thread), in and out, with the thread and time in its sample_id
 * trailer.  Unlike the sched:sched_switch tracepoint, which the kernel
 * does not emit for many switches from the idle task, they miss none:
 * perfdata_switch_in() gives the switch-in a tracepoint stream lacks.
 *
 * The file is read through its own descriptor in blocks (pread, so the
 * caller's offset is untouched), a long one's second half on a thread of
 * its own while the caller's walks the first (up to 64 MiB more memory
 * while it runs, for the records other than samples it copies); memory
 * grows with the number of threads
 * and processes in the recording (a process's mappings are kept as at
 * most 4096 address ranges), and with its switch-in records: 8 bytes
 * for each (of the ~50 bytes perf wrote for it), none without
 * --switch-events: the one part that grows with the recording's length,
 * not with what it holds.  Every name is
 * what the profiled programs chose: escape it before showing it.
 */
#ifndef FOLDKIT_PLUGIN_PERFDATA_H
#define FOLDKIT_PLUGIN_PERFDATA_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct perfdata;

/*
 * Reads the perf.data file open on fd (name is what messages call it).
 * NULL with *err set when it is not a perf.data file in this machine's
 * byte order or cannot be read; the caller keeps fd.  Free the result with
 * perfdata_free().
 */
struct perfdata *perfdata_read(int fd, const char *name, GError **err);
void perfdata_free(struct perfdata *pd);

/*
 * NULL when the file is whole, else what is wrong with it, naming the file
 * and the byte ("x.data: cut short: ..."); owned by pd.
 */
const char *perfdata_damage(const struct perfdata *pd);

/*
 * From the header alone, without reading the records: what
 * perfdata_damage() would say of a file whose data section is cut short
 * or has no size (a file being written, or perf record killed); NULL
 * when the header does not show that.  Free the result with g_free().
 */
char *perfdata_cut(int fd, const char *name);

/*
 * The times of the first and last samples as perf record noted them (the
 * HEADER_SAMPLE_TIME feature); false when the file does not say (perf
 * record -B, a pipe, a cut feature section).
 */
bool perfdata_sample_times(const struct perfdata *pd, uint64_t *first, uint64_t *last);

/* Events lost while recording (PERF_RECORD_LOST) and lost samples. */
void perfdata_lost(const struct perfdata *pd, uint64_t *events, uint64_t *samples);

/* True if the file holds records compressed by perf record -z. */
bool perfdata_compressed(const struct perfdata *pd);

/*
 * What perf record's command line (the HEADER_CMDLINE feature) says it
 * recorded: every CPU's events (-a, --all-cpus; or -C, some CPUs'), some
 * threads' (-p, -t, -u, or a command after "--"), or the file does not
 * say.
 */
enum perfdata_scope {
	PERFDATA_SCOPE_UNKNOWN,
	PERFDATA_SCOPE_CPUS,
	PERFDATA_SCOPE_TASKS,
};
enum perfdata_scope perfdata_scope(const struct perfdata *pd);

/* True if the file is in perf's pipe format (no header sizes). */
bool perfdata_is_pipe(const struct perfdata *pd);

/*
 * The name of process pid as above, or NULL; owned by pd.  *from_exe is
 * set when it is the executable's file name rather than a thread's.
 */
const char *perfdata_process_name(const struct perfdata *pd, int pid, bool *from_exe);

/*
 * The process of thread tid as its latest COMM or FORK record says, or -1
 * (no record of it).  Ids are perf's (its PID namespace's).
 */
int perfdata_thread_pid(const struct perfdata *pd, int tid);

/*
 * Whether any PERF_RECORD_MMAP or MMAP2 of process pid, or of a process it
 * was forked from, covers addr.  When none does, perf never places addr
 * in a map of pid's (its maps come only from those records), so an
 * address it finds in no map now stays in none.  True when the records
 * could not all be read (damage, perf record -z).
 */
bool perfdata_may_map(const struct perfdata *pd, int pid, uint64_t addr);

/*
 * Where perf finds a user address of process pid at time, when it is in
 * a file that perf names the same in every process mapping it: in *f the
 * file's number (the same for the same file: its name, and the device and
 * inode or build id of MMAP2 records), its name, and the address's offset
 * in it (addr - the mapping's start + its file offset), where perf places
 * addr for this process as for any other.  The mapping is the process's
 * own, made before time and since the FORK that made the process, or,
 * when none of its own holds addr, the one its parent had when it forked
 * (perf copies the parent's maps), and so on up; it must be an executable
 * mapping of a file by name (not anonymous memory, a device, a memfd, a
 * deleted file or perf's JIT maps) overlapping none of its process's
 * others.  False (nothing known) otherwise, or when a FORK of the process
 * has the very time, perfdata_has_map_times() is false or a record of a
 * process on the way may reach perf late.
 */
struct perfdata_file {
	uint32_t file;
	const char *name;
	uint64_t offset;
};
bool perfdata_file_at(const struct perfdata *pd, int pid, uint64_t addr, uint64_t time,
		      struct perfdata_file *f);

/*
 * What the recording says identifies file number file (perfdata_file_at()'s
 * f->file): 'i' when its MMAP2 records give the device and inode (id: the
 * major and minor numbers, u32 each, then the inode, u64, and its
 * generation), 'b' a build id (id[0] its size, the bytes from id[4]), 0
 * nothing (MMAP records).
 */
char perfdata_file_identity(const struct perfdata *pd, uint32_t file, uint8_t id[24]);

/*
 * Whether the recording has two kinds of samples of some event (the same
 * type and config of their perf_event_attr, e.g. a tracepoint): some with a user
 * stack dump (PERF_SAMPLE_STACK_USER: perf record's call-graph=dwarf) and
 * some with a call chain and no dump (call-graph=fp): perf record -e EV
 * -e 'EV/call-graph=dwarf/' records both at each event, the dump first.
 */
bool perfdata_dump_twins(const struct perfdata *pd);

/*
 * When perf's view of a process's maps changes: perf changes it only at
 * the process's PERF_RECORD_MMAP and MMAP2 records (a new map replaces
 * the parts of older ones it overlaps; an exec's COMM drops nothing) and
 * at the FORK that makes it (a copy of its parent's), each at its time
 * (the records' sample_id, perf record's default).  perf script hands
 * samples and these records over in time order, but for the records of
 * perfdata_unordered().
 *
 * perfdata_has_map_times() is false when the file does not give every
 * such record's time (no sample_id_all or no time in it; event
 * attributes that disagree; damage; perf record -z): then
 * perfdata_map_gen() knows nothing.
 *
 * perfdata_map_gen() gives the generation of pid's maps at time: how
 * many changes came before it, numbered from 0, the same for every
 * sample until the next change, whose time *until gets (UINT64_MAX when
 * none).  PERFDATA_NO_GEN when a change has the sample's very time
 * (perf's order of the two is unknown), the process changed its maps
 * more than 4096 times (not all kept), or a record of it may reach perf
 * late (perfdata_unordered()): its addresses then name no
 * generation's frames; *until is time.
 */
#define PERFDATA_NO_GEN UINT32_MAX
bool perfdata_has_map_times(const struct perfdata *pd);
uint32_t perfdata_map_gen(const struct perfdata *pd, int pid, uint64_t time, uint64_t *until);

/*
 * The same for the name perf gives thread tid (what resolve_ip()'s comm
 * says for its samples): perf changes it only at the thread's
 * PERF_RECORD_COMM, at the FORK that makes a thread of that tid (named
 * after its parent), and at its EXIT (perf may forget the thread, and
 * make it anew, named ":TID", at a later sample).  Between two changes
 * perf names the thread's samples the same.  Known when
 * perfdata_has_map_times() is true.
 */
uint32_t perfdata_name_gen(const struct perfdata *pd, int tid, uint64_t time, uint64_t *until);

/*
 * perf script hands records over in time order only as far as the
 * file's PERF_RECORD_FINISHED_ROUND records let it (util/ordered-events.c):
 * a record written after perf has handed over a later time goes out late,
 * after samples of later times ("N out of order events").  The number of
 * COMM, FORK, EXIT, MMAP and MMAP2 records that may (a superset of
 * perf's own count of them), and in *processes how many processes they
 * touch: perfdata_map_gen() of those processes and perfdata_name_gen()
 * of the records' threads give PERFDATA_NO_GEN at every time (perf's
 * view changes when it gets the record, not at the record's time).
 */
uint64_t perfdata_unordered(const struct perfdata *pd, unsigned *processes);

/*
 * The SWITCH and SWITCH_CPU_WIDE records in the file, in and out (0
 * without perf record --switch-events).
 */
uint64_t perfdata_switches(const struct perfdata *pd);

/*
 * The first time in [from, to] that perf's switch records show thread
 * tid (as perf names it: the samples' tid, not the kernel's in a PID
 * namespace) switched in; false when none does, or the records do not
 * give their thread and time (no sample_id_all, event attributes that
 * disagree).
 */
bool perfdata_switch_in(const struct perfdata *pd, int tid, uint64_t from, uint64_t to,
			uint64_t *time);

#endif
