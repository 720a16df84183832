/*
 * frames.h - a dlfilter sample's raw callchain as perf_frame values, the
 * frames `perf script` would print for it, resolved through perf's own
 * resolve_address() and cached per address.
 *
 *	struct frame_cache *fc = frame_cache_new(fns, 127);
 *	...in filter_event():
 *	size_t n = frame_cache_chain(fc, sample, ctx);
 *	const struct perf_frame *f = frame_cache_frames(fc);
 *	...f[0] is the leaf; valid until the next call...
 *	...or, without copying the frames, their ids:
 *	const uint32_t *ids = frame_cache_chain_ids(fc);
 *	...frame_cache_store(fc)[ids[0]] is the leaf...
 *	frame_cache_free(fc);
 *
 * The walk is perf's (tools/perf/util/machine.c, callee order): entries at
 * or above PERF_CONTEXT_MAX switch between user and kernel context and are
 * not frames; only the first max_stack real entries count (perf script's
 * --max-stack, kernel.perf_event_max_stack by default); a guest or unknown
 * context marker discards the whole chain, as perf does.  Each frame is
 * what perf script prints: "SYMBOL+0xOFF" or "[unknown]", the DSO name
 * perf shows or "[unknown]", and the address relative to the DSO for user
 * space, absolute for the kernel and for addresses outside every map.
 *
 * perf resolves an entry in the context its marker names; resolve_address()
 * falls back to the other context when that fails, so an address found in
 * the wrong context is turned back into "[unknown]" here, as perf script
 * shows it.
 *
 * Cache: user-space entries are keyed by (process, generation, address),
 * kernel entries by address alone.  A process's generation is that of
 * perf's view of its maps, which changes at its MMAP records, not at its
 * exec (perf keeps the old program's maps until new ones overlap them, so
 * an address resolved between an exec's COMM and its MMAPs names the old
 * program, after them the new one); the plugin reads it from perf.data
 * (frame_cache_set_gen()).  Without it, a generation ends when one of
 * the process's threads changes its name (exec, prctl): a guess, wrong
 * for samples between an exec's COMM and its MMAPs.  Threads without a pid (pid 0: inside
 * a PID namespace, every thread outside it) share no address space, so
 * their user-space entries are resolved every time.  Processes that map
 * one file share its frames (frame_cache_set_files()).  The cache grows
 * with the number of distinct addresses, never with the number of samples.
 */
#ifndef FOLDKIT_PLUGIN_FRAMES_H
#define FOLDKIT_PLUGIN_FRAMES_H

#include "collapse/perfscript.h"

#include <perf/perf_dlfilter.h>
#include <stddef.h>

struct frame_cache;

/* fns must outlive the cache (it is perf's table in the plugin). */
struct frame_cache *frame_cache_new(const struct perf_dlfilter_fns *fns,
				    unsigned max_stack);
void frame_cache_free(struct frame_cache *fc);

/*
 * Tells the cache the name of thread tid of process pid for this sample
 * and the sample's time; call it before frame_cache_chain() for each
 * sample, in perf's (time) order.  Returns the name interned: the same
 * pointer for the same text, for as long as the cache.
 */
const char *frame_cache_note_comm(struct frame_cache *fc, int pid, int tid,
				  const char *comm, uint64_t time);

/*
 * The name perf gives thread tid of process pid at time, without asking
 * perf (resolve_ip() costs perf script a tenth of its own time): the one
 * frame_cache_note_comm() was last told for the thread, when the
 * generation of the thread's name (frame_cache_set_name_gen()) is the
 * same as then; NULL when unknown (then ask perf, and tell
 * frame_cache_note_comm()).  Does what frame_cache_note_comm() does.
 */
const char *frame_cache_known_comm(struct frame_cache *fc, int pid, int tid, uint64_t time);

/*
 * Tells the cache how to learn the generation of a process's maps at a
 * time (perfdata_map_gen()): fn returns it, or FRAME_CACHE_NO_GEN when
 * none can be trusted (then nothing of the process's user space is
 * cached for that sample), and sets *until to the time it ends.
 */
#define FRAME_CACHE_NO_GEN UINT32_MAX
typedef uint32_t frame_cache_gen_fn(void *data, int pid, uint64_t time, uint64_t *until);
void frame_cache_set_gen(struct frame_cache *fc, frame_cache_gen_fn *fn, void *data);

/*
 * Tells the cache how to learn the generation of a thread's name at a
 * time (perfdata_name_gen(), called with the tid): as for
 * frame_cache_set_gen().  Without it, frame_cache_known_comm() knows
 * nothing.
 */
void frame_cache_set_name_gen(struct frame_cache *fc, frame_cache_gen_fn *fn, void *data);

/*
 * Resolves the frames perf script prints for the sample's callchain and
 * returns how many; frame_cache_frames() gives them, frame_cache_chain_ids()
 * their ids.
 */
size_t frame_cache_chain(struct frame_cache *fc,
			 const struct perf_dlfilter_sample *sample, void *ctx);

/*
 * The frames of the last frame_cache_chain() or frame_cache_ip(), leaf
 * first.  The frames, and the strings they point to, belong to the cache;
 * the array is reused by the next call.  (Copied on the first call for a
 * chain: a caller that needs only their names can use the ids instead.)
 */
const struct perf_frame *frame_cache_frames(struct frame_cache *fc);

/*
 * The cached frames, by id: valid until the next frame_cache_chain() or
 * frame_cache_ip() (the array may move when it grows; the strings never
 * do).
 */
const struct perf_frame *frame_cache_store(const struct frame_cache *fc);

/*
 * After frame_cache_chain(): an id for each of its frames, its index in
 * frame_cache_store(), numbered from 0 in the order they were made: the same for
 * the same frame, different for any other (an entry is never reused: a
 * process's new generation gets new ones; see collapser_add_chain()).
 * NULL when a frame was not cached (a thread without a pid) or after
 * frame_cache_ip().  Valid until the next call.
 */
const uint32_t *frame_cache_chain_ids(const struct frame_cache *fc);

/*
 * After frame_cache_chain(): the chain's id, one per distinct raw chain
 * of a space, numbered from 0 in the order they were first seen (chains
 * with one id have the same frame ids);
 * FRAME_CACHE_NO_CHAIN when frame_cache_chain_ids() is NULL or the chain
 * cache is full (then only the ids name the chain).
 */
#define FRAME_CACHE_NO_CHAIN UINT32_MAX
uint32_t frame_cache_chain_id(const struct frame_cache *fc);

/*
 * The build id of a DSO, as lowercase hex, or NULL when perf gave none;
 * dso is a frame's dso.s (an interned pointer) from this cache.
 */
const char *frame_cache_build_id(const struct frame_cache *fc, const char *dso);

/*
 * The one frame perf script prints for a sample without a callchain: the
 * sample's own address, resolved by resolve_ip().
 */
size_t frame_cache_ip(struct frame_cache *fc,
		      const struct perf_dlfilter_sample *sample, void *ctx);

/*
 * Tells the cache where the recording could still map a file for process
 * pid (perfdata_may_map()): a user address in no file's map now, where
 * fn says the recording maps nothing, is cached as unknown, not resolved
 * every time.  Without it every such address is resolved every time.
 */
typedef bool frame_cache_may_map_fn(void *data, int pid, uint64_t addr);
void frame_cache_set_may_map(struct frame_cache *fc, frame_cache_may_map_fn *fn, void *data);

/*
 * Shares a lean cache's frames between processes: fn says where perf
 * finds a user address of process pid at time when it is in a file that
 * perf names the same in every process mapping it (perfdata_file_at()):
 * the file's number, its name and the address's offset in it.  A new
 * address whose (file, offset) was made a frame before, in any process,
 * then gets that frame's word (once its caller set it) without asking
 * perf: the thousand processes of a build's compiler resolve each of its
 * functions once, not once each.  Every address of such a file the cache
 * still asks perf about checks fn's answer: perf must place it at that
 * offset of a DSO (one of another name is not shared).  When perf places
 * it elsewhere or nowhere, the cache stops sharing: see
 * frame_cache_misplaced().
 */
typedef bool frame_cache_file_fn(void *data, int pid, uint64_t addr, uint64_t time,
				 uint32_t *file, const char **name, uint64_t *offset);
void frame_cache_set_files(struct frame_cache *fc, frame_cache_file_fn *fn, void *data);

/*
 * Gives a lean cache's user addresses where the recording maps nothing for
 * the process (frame_cache_set_may_map()) one frame, and one word: perf
 * names them all "[unknown]", and a caller that names frames without their
 * addresses names them alike.  (A stack walked through code without frame
 * pointers has many such addresses, each seen once.)
 */
void frame_cache_share_unmapped(struct frame_cache *fc);

/*
 * The addresses given a frame by file, and those perf placed elsewhere
 * than their file said (0 or 1: sharing stops at the first).
 */
void frame_cache_file_stats(const struct frame_cache *fc, uint64_t *by_file, uint64_t *misplaced);

/*
 * When perf placed an address elsewhere than its file said: the addresses
 * given a frame by file before that (their frames may not be the ones
 * perf would have given them), the file and the address in *file and
 * *ip.  0 when perf placed every one as said, or none was shared before.
 */
uint64_t frame_cache_misplaced(const struct frame_cache *fc, const char **file, uint64_t *ip);

/*
 * Address spaces: user space is the process's (and generation's), see
 * frame_cache_space(); kernel addresses resolve the same in every process;
 * threads without a pid in perf's PID namespace all show as process 0,
 * whose maps perf keeps changing, so nothing of theirs is cached.
 */
#define FRAME_SPACE_KERNEL UINT64_MAX
#define FRAME_SPACE_HV (UINT64_MAX - 1)
#define FRAME_SPACE_NONE (UINT64_MAX - 2)

/* The user space of the thread frame_cache_note_comm() was last told of. */
uint64_t frame_cache_space(const struct frame_cache *fc);

/*
 * One entry of a raw call chain, walked as perf walks it: a context
 * marker switches *space (user space is user) and is no frame; a guest
 * or unknown marker makes perf drop the whole chain.
 */
enum frame_chain_entry { FRAME_CHAIN_IP, FRAME_CHAIN_MARK, FRAME_CHAIN_DROP };

static inline enum frame_chain_entry frame_chain_entry(uint64_t ip, uint64_t user,
						       uint64_t *space)
{
	if (ip < PERF_CONTEXT_MAX)
		return FRAME_CHAIN_IP;
	switch (ip) {
	case PERF_CONTEXT_HV:
		*space = FRAME_SPACE_HV;
		return FRAME_CHAIN_MARK;
	case PERF_CONTEXT_KERNEL:
		*space = FRAME_SPACE_KERNEL;
		return FRAME_CHAIN_MARK;
	case PERF_CONTEXT_USER:
		*space = user;
		return FRAME_CHAIN_MARK;
	default:
		return FRAME_CHAIN_DROP;
	}
}

/*
 * One address's frame, as frame_cache_chain() makes it, for a caller that
 * keeps what it makes of the frame (stacks.h: its name id) in a 32-bit
 * word of the cache's slot of the address: the word (0 until the caller
 * sets it), or NULL when the frame is not cached (see above); *id gets
 * the frame's id, or FRAME_CACHE_UNCACHED.  Valid until the next call.
 * The words have one user: the caller frame_cache_claim_word() says true
 * to (the first).  frame_cache_word_frame() gives the frame.
 */
#define FRAME_CACHE_UNCACHED UINT32_MAX
uint32_t *frame_cache_word(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip,
			   uint32_t *id);
bool frame_cache_claim_word(struct frame_cache *fc);

/*
 * Whether the last frame_cache_word() made the address's slot, its word
 * the one of the frame another process made at the same file offset
 * (frame_cache_set_files()): the address is new to this process.
 */
bool frame_cache_word_shared(const struct frame_cache *fc);

/*
 * The frame of the last frame_cache_word(), valid until the next call
 * (its texts too, in a lean cache; else for as long as the cache).  A
 * lean cache made it then, when new or not cached; else resolves it
 * again (as it resolved it then: cached frames do not change).
 */
const struct perf_frame *frame_cache_word_frame(struct frame_cache *fc, void *ctx);

/*
 * Makes the cache lean: it keeps no frames (nor their texts), only the
 * slots and their words, for a cache whose only user is
 * frame_cache_word() (and frame_cache_ip()); frame_cache_chain() must
 * not be called.  Call it before the first frame.
 */
void frame_cache_set_lean(struct frame_cache *fc);

/* An address in its space. */
struct frame_addr {
	uint64_t space, ip;
};

/*
 * Starts loading the cache's slots of n addresses (a chain's slots are
 * looked up faster together than one after the other).
 */
void frame_cache_prefetch(const struct frame_cache *fc, const struct frame_addr *a, size_t n);

#endif
