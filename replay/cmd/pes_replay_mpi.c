/*
 * pes_replay_mpi.c — `mpirun -np R pes-replay-mpi TRACE [pes-replay options]`:
 * the report of `pes-replay TRACE [options]`, byte for byte, with the reuse
 * engines' work split over R processes (docs/replay.md, "Distributed replay
 * (MPI)").
 *
 * Parts (replay_run.h): rank k reads only part k of the stream (a byte
 * range of a text trace, a range of merged times of a pes trace), cuts it
 * into windows of --mpi-window accesses and runs the engines over them
 * (profiles.h, struct pes_profiles_split with parts); ranks > 0 send one
 * message per window, then their part's counts (summary, model work), and
 * rank 0 resolves the windows part after part and writes the report.
 * With --simulate, --cores or --sample-rate every rank reads the whole trace
 * instead and the windows are dealt round-robin; the summary and the model
 * run on rank 0 over the whole stream, --simulate is shared out by address
 * partitions (each rank's counts travel to rank 0 after the stream), and
 * each --cores configuration runs whole on one rank, its report section
 * travelling to rank 0 (replay_run.c, "deal").
 *
 * Messages (rank k > 0 to rank 0, in the order rank 0 reads them):
 *   TAG_WINDOW {window, bytes} then TAG_DATA pieces of at most PIECE bytes,
 *   once per window of k; with parts, TAG_PART {0, bytes} and its TAG_DATA
 *   (which also ends k's windows); with --simulate, one TAG_PART per
 *   stream's partition counts, or with --cores one per configuration of k
 *   (its report section); then TAG_DONE {status, code, message}.
 * Rank 0 to each rank k > 0: one TAG_STOP, early when rank 0 fails (k stops
 * at its next batch), else at the end. Last, rank 0 broadcasts the exit
 * status once its report or error line is out, so every rank ends with rank
 * 0's verdict: a failure anywhere is one line from rank 0 and a non-zero exit
 * everywhere, without MPI_Abort (and no rank exits early enough for mpirun to
 * kill rank 0 before it has printed).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay_run.h"
#include "report_util.h"

enum { TAG_WINDOW = 1, TAG_DATA, TAG_DONE, TAG_STOP, TAG_PART };
#define PIECE     (1 << 30) /* bytes per MPI message (counts are ints) */
#define IN_FLIGHT 2         /* windows a rank may have sent but rank 0 not yet received */

struct done_msg {
    int32_t status; /* 0, or -1 */
    int32_t code;   /* the error's enum pes_error_code */
    char message[sizeof((struct pes_error *)0)->message];
};

/* A window on its way to rank 0. */
struct outgoing {
    void *buf;
    uint64_t head[2]; /* window, bytes */
    MPI_Request *req;
    int n_req;
};

struct link {
    int rank, ranks;
    /* rank > 0 */
    struct outgoing out[IN_FLIGHT];
    int n_out, first_out;
    MPI_Request stop_req;
    int32_t stop;
    int stop_done; /* TAG_STOP came */
    /* rank 0 */
    uint8_t *done; /* [ranks] TAG_DONE received */
    uint8_t *told; /* [ranks] TAG_STOP sent */
    int fail;      /* tests: PES_MPI_TEST_FAIL names this rank */
    /* PES_MPI_STATS: one line per rank on stderr at the end */
    uint64_t windows, bytes;
    uint64_t parts;    /* TAG_PART messages: a part's counts, a --cores configuration's section */
    double wait_s;     /* blocked on messages (rank 0: receiving; others: sends in flight) */
    double t0, work_s; /* start; seconds until the rank's own work was done */
};

/* Tests of the failure paths (e2e.replay_mpi): PES_MPI_TEST_FAIL=K makes
 * rank K fail where it first meets a window of another rank or its own. */
static int injected(struct link *l, struct pes_error *err)
{
    if (!l->fail)
        return 0;
    return pes_error_set(err, PES_ERR_ARG, 0, "failure injected by PES_MPI_TEST_FAIL");
}

/* Waiting without spinning: Open MPI's blocking calls poll at full speed,
 * which on ranks that outnumber the CPUs takes the CPU from the rank being
 * waited for (rank 0 resolving the others' windows, or a rank still reading
 * its part). A short sleep between tests costs at most that much latency. */
static void nap(void)
{
    nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
}

static int idle_wait(int n, MPI_Request *req)
{
    int flag = 0, rc;
    while ((rc = MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE)) == MPI_SUCCESS && !flag)
        nap();
    return rc;
}

static void idle_probe(int from, MPI_Status *st)
{
    int flag = 0;
    while (MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st) == MPI_SUCCESS && !flag)
        nap();
}

static int mpi_error(struct pes_error *err, const char *what, int code)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(code, s, &n);
    return pes_error_set(err, PES_ERR_IO, 0, "MPI: %s: %.*s", what, n, s);
}

/* ------------------------------------------------------------ ranks > 0 */

static int wait_out(struct link *l, struct pes_error *err)
{
    struct outgoing *o = &l->out[l->first_out];
    double t0 = MPI_Wtime();
    int rc = idle_wait(o->n_req, o->req);
    l->wait_s += MPI_Wtime() - t0;
    free(o->buf);
    free(o->req);
    memset(o, 0, sizeof *o);
    l->first_out = (l->first_out + 1) % IN_FLIGHT;
    l->n_out--;
    return rc == MPI_SUCCESS ? 0 : mpi_error(err, "sending a window", rc);
}

/* Has rank 0 given up? (Its TAG_STOP came before the end.) */
static int stopped(struct link *l, struct pes_error *err)
{
    if (!l->stop_done)
        MPI_Test(&l->stop_req, &l->stop_done, MPI_STATUS_IGNORE);
    if (l->stop_done)
        return pes_error_set(err, PES_ERR_ARG, 0, "stopped: rank 0 failed");
    return 0;
}

static int send_window(void *ctx, uint64_t w, void *buf, size_t len, struct pes_error *err)
{
    struct link *l = ctx;
    if (injected(l, err) < 0 || stopped(l, err) < 0 ||
        (l->n_out == IN_FLIGHT && wait_out(l, err) < 0)) {
        free(buf);
        return -1;
    }
    struct outgoing *o = &l->out[(l->first_out + l->n_out) % IN_FLIGHT];
    uint64_t pieces = (len + PIECE - 1) / PIECE;
    o->buf = buf;
    o->head[0] = w;
    o->head[1] = len;
    if (!(o->req = malloc((size_t)(pieces + 1) * sizeof *o->req))) {
        free(buf);
        o->buf = NULL;
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    }
    l->n_out++;
    l->windows++;
    l->bytes += len;
    int rc =
        MPI_Isend(o->head, 2, MPI_UINT64_T, 0, TAG_WINDOW, MPI_COMM_WORLD, &o->req[o->n_req++]);
    for (uint64_t i = 0; rc == MPI_SUCCESS && i < pieces; i++) {
        size_t at = (size_t)i * PIECE, n = len - at < PIECE ? len - at : PIECE;
        rc = MPI_Isend((char *)buf + at, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                       &o->req[o->n_req++]);
    }
    return rc == MPI_SUCCESS ? 0 : mpi_error(err, "sending a window", rc);
}

/* Every batch: lets sends in flight move on, and stops when rank 0 failed. */
static int progress(void *ctx, struct pes_error *err)
{
    struct link *l = ctx;
    if (l->n_out) {
        struct outgoing *o = &l->out[l->first_out];
        int flag;
        MPI_Testall(o->n_req, o->req, &flag, MPI_STATUSES_IGNORE);
    }
    return stopped(l, err);
}

/* The outcome goes to rank 0 (its verdict comes back at the end). */
static int agree_other(void *ctx, int rc, struct pes_error *err)
{
    struct link *l = ctx;
    l->work_s = MPI_Wtime() - l->t0;
    struct done_msg d = {.status = rc < 0 ? -1 : 0, .code = err->code};
    if (rc < 0)
        snprintf(d.message, sizeof d.message, "%s", err->message);
    MPI_Send(&d, (int)sizeof d, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
    while (l->n_out)
        wait_out(l, err);
    return rc < 0 ? -1 : 0;
}

/* After the part's last window: its counts, which also tell rank 0 that no
 * window follows. Sent whole before anything else happens on this rank. */
static int send_part(void *ctx, void *buf, size_t len, struct pes_error *err)
{
    struct link *l = ctx;
    if (stopped(l, err) < 0) {
        free(buf);
        return -1;
    }
    uint64_t head[2] = {0, len};
    l->parts++;
    l->bytes += len;
    int rc = MPI_Send(head, 2, MPI_UINT64_T, 0, TAG_PART, MPI_COMM_WORLD);
    for (size_t at = 0; rc == MPI_SUCCESS && at < len; at += PIECE) {
        size_t n = len - at < PIECE ? len - at : PIECE;
        rc = MPI_Send((char *)buf + at, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
    }
    free(buf);
    return rc == MPI_SUCCESS ? 0 : mpi_error(err, "sending a part's counts", rc);
}

/* ------------------------------------------------------------ rank 0 */

static int recv_done(struct link *l, int from, struct pes_error *err)
{
    struct done_msg d;
    MPI_Recv(&d, (int)sizeof d, MPI_BYTE, from, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    l->done[from] = 1;
    if (d.status == 0)
        return 0;
    d.message[sizeof d.message - 1] = '\0';
    return replay_part_failure(err, "rank", (uint32_t)from, d.code, d.message);
}

/* The next message of rank `from` with this tag (TAG_WINDOW or TAG_PART:
 * a head {window, bytes}, then its TAG_DATA pieces) into a malloc'd buffer. */
static int recv_body(int from, int tag, uint64_t head[2], void **buf, struct pes_error *err)
{
    MPI_Recv(head, 2, MPI_UINT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    unsigned char *b = malloc(head[1] ? (size_t)head[1] : 1);
    if (!b)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory (a window of rank %d)", from);
    for (uint64_t at = 0; at < head[1]; at += PIECE) {
        size_t n = head[1] - at < PIECE ? (size_t)(head[1] - at) : PIECE;
        MPI_Recv(b + at, (int)n, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    *buf = b;
    return 0;
}

static int recv_window(void *ctx, uint64_t w, uint32_t from, void **buf, size_t *len,
                       struct pes_error *err)
{
    struct link *l = ctx;
    MPI_Status st;
    if (injected(l, err) < 0)
        return -1;
    if (l->done[from])
        return pes_error_set(err, PES_ERR_ARG, 0, "rank %u has ended; window %llu is missing", from,
                             (unsigned long long)w);
    double t0 = MPI_Wtime();
    idle_probe((int)from, &st);
    l->wait_s += MPI_Wtime() - t0;
    if (st.MPI_TAG == TAG_DONE) {
        if (recv_done(l, (int)from, err) < 0)
            return -1;
        return pes_error_set(err, PES_ERR_ARG, 0, "rank %u ended before window %llu", from,
                             (unsigned long long)w);
    }
    if (st.MPI_TAG == TAG_PART)
        return 1; /* from's part had w windows (left for recv_part) */
    uint64_t head[2];
    if (recv_body((int)from, TAG_WINDOW, head, buf, err) < 0)
        return -1;
    *len = (size_t)head[1];
    l->windows++;
    l->bytes += head[1];
    if (head[0] != w) {
        free(*buf);
        *buf = NULL;
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "rank %u sent window %llu where window %llu was due", from,
                             (unsigned long long)head[0], (unsigned long long)w);
    }
    return 0;
}

/* Rank `from`'s part counts (after all its windows). */
static int recv_part(void *ctx, uint32_t from, void **buf, size_t *len, struct pes_error *err)
{
    struct link *l = ctx;
    MPI_Status st;
    if (l->done[from])
        return pes_error_set(err, PES_ERR_ARG, 0, "rank %u has ended; its part is missing", from);
    double t0 = MPI_Wtime();
    idle_probe((int)from, &st);
    l->wait_s += MPI_Wtime() - t0;
    if (st.MPI_TAG == TAG_DONE) {
        if (recv_done(l, (int)from, err) < 0)
            return -1;
        return pes_error_set(err, PES_ERR_ARG, 0, "rank %u ended before its part's counts", from);
    }
    if (st.MPI_TAG != TAG_PART)
        return pes_error_set(err, PES_ERR_ARG, 0, "rank %u sent a window after its part's counts",
                             from);
    uint64_t head[2];
    if (recv_body((int)from, TAG_PART, head, buf, err) < 0)
        return -1;
    *len = (size_t)head[1];
    l->parts++;
    l->bytes += head[1];
    return 0;
}

static void tell_stop(struct link *l, int to)
{
    int32_t stop = 1;
    if (l->told[to])
        return;
    MPI_Send(&stop, 1, MPI_INT32_T, to, TAG_STOP, MPI_COMM_WORLD);
    l->told[to] = 1;
}

/* Every other rank's outcome; after a failure, what they still send is read
 * and dropped, so that none of them waits for ever. */
static int agree_root(void *ctx, int rc, struct pes_error *err)
{
    struct link *l = ctx;
    l->work_s = MPI_Wtime() - l->t0;
    if (rc < 0)
        for (int k = 1; k < l->ranks; k++)
            tell_stop(l, k);
    for (int k = 1; k < l->ranks; k++)
        while (!l->done[k]) {
            MPI_Status st;
            idle_probe(k, &st);
            struct pes_error e = {0};
            if (st.MPI_TAG == TAG_DONE) {
                if (recv_done(l, k, &e) < 0 && rc == 0) {
                    *err = e;
                    rc = -1;
                }
                continue;
            }
            uint64_t head[2];
            void *buf = NULL;
            int part = st.MPI_TAG == TAG_PART;
            if (recv_body(k, part ? TAG_PART : TAG_WINDOW, head, &buf, &e) < 0)
                MPI_Abort(MPI_COMM_WORLD, 1); /* cannot drain it */
            free(buf);
            if (part) {
                if (rc == 0) {
                    pes_error_set(err, PES_ERR_ARG, 0, "rank %d sent its part's counts twice", k);
                    rc = -1;
                }
                continue;
            }
            if (rc == 0) {
                pes_error_set(err, PES_ERR_ARG, 0,
                              "rank %d sent window %llu after the end of the stream", k,
                              (unsigned long long)head[0]);
                rc = -1;
            }
        }
    for (int k = 1; k < l->ranks; k++)
        tell_stop(l, k);
    return rc;
}

/* ------------------------------------------------------------ main */

/* This process's CPU time, its threads together (PES_MPI_STATS). */
static double cpu_seconds(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What rank 0 decides before the replay: -1 to go on, else the exit status
 * of every rank. */
static int prepare(struct replay_options *o, struct pes_machine *m)
{
    struct pes_error err = {0};
    if (replay_load_machine(o, m, &err) < 0)
        return replay_fail(&err);
    if (o->show_machine) {
        pes_machine_print(m, stdout);
        return 0;
    }
    if (o->compare) {
        replay_message("--compare: not distributed; run pes-replay --compare SAMPLED FULL");
        return 2;
    }
    if (o->diff) {
        replay_message(
            "--diff: not distributed; write each report with pes-replay-mpi --format json, "
            "then pes-replay --diff A.json B.json");
        return 2;
    }
    if (replay_input_check_file(o->trace, &err) < 0)
        return replay_fail(&err);
    if (replay_input_pes_kind(o->trace) == PES_TRACE_SAMPLED) {
        replay_message("%s: a sampled trace; pes-replay-mpi replays full traces and address traces "
                       "(run pes-replay %s)",
                       o->trace, o->trace);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int rank = 0, ranks = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    /* rank 0 speaks for all: the others print nothing */
    replay_message_setup("pes-replay-mpi", rank != 0);
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        fclose(stdout);

    struct replay_options o;
    int rc = replay_parse_options(argc, argv, &o);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    static struct pes_machine machine;
    int32_t pre = rank == 0 ? prepare(&o, &machine) : -1;
    MPI_Bcast(&pre, 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (pre >= 0) {
        MPI_Finalize();
        return pre;
    }
    /* the machine rank 0 sees ('host' may differ between nodes) */
    MPI_Bcast(&machine, (int)sizeof machine, MPI_BYTE, 0, MPI_COMM_WORLD);

    const char *fail = getenv("PES_MPI_TEST_FAIL");
    struct link l = {.rank = rank, .ranks = ranks, .fail = fail && *fail && atoi(fail) == rank};
    struct pes_profiles_split split = {
        .rank = (uint32_t)rank,
        .ranks = (uint32_t)ranks,
        .window = o.mpi_window ? o.mpi_window : REPLAY_MPI_WINDOW,
        .send = send_window,
        .recv = recv_window,
        .ctx = &l,
    };
    /* each rank reads its own part of the trace where that keeps the report
     * exact (replay_run.h); --simulate needs the whole stream on rank 0 */
    struct replay_hooks h = {.split = &split,
                             .no_report = rank != 0,
                             .ctx = &l,
                             .part = (uint32_t)rank,
                             .parts = o.knobs.simulate ? 1 : (uint32_t)ranks,
                             /* --simulate: the address partitions shared out */
                             .share = (uint32_t)rank,
                             .shares = (uint32_t)ranks,
                             .part_send = send_part,
                             .part_recv = recv_part};
    if (rank == 0) {
        l.done = calloc((size_t)ranks, 1);
        l.told = calloc((size_t)ranks, 1);
        if (!l.done || !l.told)
            MPI_Abort(MPI_COMM_WORLD, 1);
        h.agree = agree_root;
    } else {
        MPI_Irecv(&l.stop, 1, MPI_INT32_T, 0, TAG_STOP, MPI_COMM_WORLD, &l.stop_req);
        h.agree = agree_other;
        h.progress = progress;
    }
    if (ranks == 1)
        h.agree = NULL;
    l.t0 = MPI_Wtime();
    int32_t verdict = replay_full(&o, &machine, &h);
    if (getenv("PES_MPI_STATS"))
        fprintf(stderr,
                "pes-replay-mpi: rank %d: replay %.3f s, %llu windows and %llu parts %s, %.1f MB, "
                "%.3f s waiting for messages, %.3f CPU s\n",
                rank, l.work_s, (unsigned long long)l.windows, (unsigned long long)l.parts,
                rank ? "sent" : "received", (double)l.bytes / 1e6, l.wait_s, cpu_seconds());
    if (rank != 0 && !l.stop_done)
        idle_wait(1, &l.stop_req);
    MPI_Bcast(&verdict, 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    rc = verdict;
    free(l.done);
    free(l.told);
    MPI_Finalize();
    return rc;
}
