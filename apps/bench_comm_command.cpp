// `coretrain bench comm` (nccl-tests style: time, algorithm and bus bandwidth per size) with plain MPI and
// plain Gloo measured in the same run on the same data and ratios printed; and `coretrain bench triad`, the
// STREAM-style memory-bandwidth bound (one process per rank, all ranks at once). Launch under `mpiexec -n N`
// (all three implementations) or from torchrun-style env vars (coretrain and Gloo; plain MPI needs mpiexec).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "comm/baselines_gloo.h"
#include "comm/baselines_mpi.h"
#include "comm/comm_error.h"
#include "comm/communicator.h"
#include "comm/gloo_transport.h"
#include "comm/store.h"
#include "core/bf16.h"
#include "core/error.h"

namespace {

using namespace ct;
using namespace ct::comm;
using Clock = std::chrono::steady_clock;

enum class Op { allreduce, reduce_scatter, allgather, alltoall, broadcast };
const char* const kOpNames[] = {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"};

Op parse_op(const std::string& s) {
  for (int i = 0; i < 5; ++i)
    if (s == kOpNames[i]) return static_cast<Op>(i);
  fail("--op: expected allreduce|reduce_scatter|allgather|alltoall|broadcast, got '", s, "'");
}

// nccl-tests' bus bandwidth factors: what each rank's link must carry relative to the buffer.
double bus_factor(Op op, int n) {
  if (n <= 1) return 1.0;
  switch (op) {
    case Op::allreduce:
      return 2.0 * (n - 1) / n;
    case Op::broadcast:
      return 1.0;
    default:
      return static_cast<double>(n - 1) / n;
  }
}

bool launched_by_mpi() {
  return std::getenv("PMI_RANK") || std::getenv("PMI_SIZE") || std::getenv("OMPI_COMM_WORLD_RANK");
}

// The first non-loopback IPv4 address of this host (where rank 0's store listens under mpiexec).
std::string first_ipv4() {
  ifaddrs* list = nullptr;
  std::string found = "127.0.0.1";
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_LOOPBACK)) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
    found = text;
    break;
  }
  freeifaddrs(list);
  return found;
}

// Deterministic small integers: every sum of up to 16 ranks is exact in f32 and bf16, whatever the order.
float input_value(int rank, size_t i) {
  return static_cast<float>(static_cast<int>((rank * 7 + i * 3) % 17) - 8);
}

// MPI_Barrier that gives up after `timeout` (a peer that died or hangs must not hang us too).
void timed_mpi_barrier(Timeout timeout, const char* where) {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  const auto start = Clock::now();
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (Clock::now() - start > timeout) {
      mark_comm_failed();  // so the bootstrap's exit path does not call MPI_Finalize, which would block
      fail("bench comm: ranks did not all reach ", where, " within ", timeout.count() / 1000.0,
           " s (MPI_Ibarrier)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

struct Buffers {
  char* send;
  char* recv;
};

// Counts per rank for an op whose total buffer is `bytes` (nccl-tests' "size" column).
struct Shape {
  int64_t send_count, recv_count;  // elements
};
Shape shape_of(Op op, int64_t bytes, int64_t elem, int n) {
  int64_t total = bytes / elem;
  switch (op) {
    case Op::allreduce:
    case Op::broadcast:
      return {total, total};
    case Op::reduce_scatter:
      return {total / n * n, total / n};
    case Op::allgather:
      return {total / n, total / n * n};
    case Op::alltoall:
      return {total / n * n, total / n * n};
  }
  return {0, 0};
}

void fill(char* p, int64_t count, DType dt, int rank) {
  if (dt == DType::f32) {
    auto* f = reinterpret_cast<float*>(p);
    for (int64_t i = 0; i < count; ++i) f[i] = input_value(rank, static_cast<size_t>(i));
  } else {
    auto* b = reinterpret_cast<bf16*>(p);
    for (int64_t i = 0; i < count; ++i) b[i] = to_bf16(input_value(rank, static_cast<size_t>(i)));
  }
}

float load(const char* p, int64_t i, DType dt) {
  return dt == DType::f32 ? reinterpret_cast<const float*>(p)[i]
                          : to_f32(reinterpret_cast<const bf16*>(p)[i]);
}

// Number of wrong elements in this rank's result.
int64_t verify(Op op, const Buffers& b, const Shape& s, DType dt, int rank, int n) {
  int64_t errors = 0;
  auto expect = [&](int64_t i, float want) {
    if (load(op == Op::allreduce || op == Op::broadcast ? b.send : b.recv, i, dt) != want) ++errors;
  };
  switch (op) {
    case Op::allreduce:
      for (int64_t i = 0; i < s.recv_count; ++i) {
        float want = 0;
        for (int r = 0; r < n; ++r) want += input_value(r, static_cast<size_t>(i));
        expect(i, want);
      }
      break;
    case Op::reduce_scatter:
      for (int64_t i = 0; i < s.recv_count; ++i) {
        float want = 0;
        for (int r = 0; r < n; ++r) want += input_value(r, static_cast<size_t>(rank * s.recv_count + i));
        expect(i, want);
      }
      break;
    case Op::allgather: {
      int64_t per = s.send_count;
      for (int64_t i = 0; i < s.recv_count; ++i)
        expect(i, input_value(static_cast<int>(i / per), static_cast<size_t>(i % per)));
      break;
    }
    case Op::alltoall: {
      int64_t per = s.send_count / n;
      for (int64_t i = 0; i < s.recv_count; ++i)
        expect(i, input_value(static_cast<int>(i / per), static_cast<size_t>(rank * per + i % per)));
      break;
    }
    case Op::broadcast:
      for (int64_t i = 0; i < s.recv_count; ++i) expect(i, input_value(0, static_cast<size_t>(i)));
      break;
  }
  return errors;
}

// One implementation under test: runs op on buffers b with the given shape.
struct Impl {
  std::string name;
  Buffers buf;
  std::function<void(Op, const Buffers&, const Shape&, DType)> run;
};

struct Result {
  double time_us = 0, algbw = 0, busbw = 0;
  int64_t errors = 0;
  bool ran = false;
};

char* aligned_buffer(int64_t bytes, std::vector<std::unique_ptr<char, decltype(&std::free)>>& keep) {
  size_t n = static_cast<size_t>((std::max<int64_t>(bytes, 64) + 63) / 64 * 64);
  auto* p = static_cast<char*>(std::aligned_alloc(64, n));
  CT_CHECK(p, "bench comm: cannot allocate ", n, " bytes");
  std::memset(p, 0, n);  // first touch outside the timed loop
  keep.emplace_back(p, &std::free);
  return p;
}

int run_bench_comm(int argc, char** argv) {
  CLI::App app{"coretrain collectives vs plain MPI and plain Gloo, nccl-tests style", "coretrain bench comm"};
  std::string op_name = "allreduce", dtype_name_s = "f32", impls_s = "coretrain,mpi,gloo", backend_s = "ccl";
  int64_t min_bytes = 8, max_bytes = 64ll << 20;
  int iters = 20, warmup = 5;
  bool check = false, json = false, shared = false;
  double timeout_s = 0;
  app.add_option("--op", op_name, "allreduce|reduce_scatter|allgather|alltoall|broadcast");
  app.add_option("--dtype", dtype_name_s, "f32|bf16");
  app.add_option("--min-bytes", min_bytes, "smallest total buffer (bytes; K/M/G suffixes: 64K)")
      ->transform(ct::app::kPositiveSize);
  app.add_option("--max-bytes", max_bytes, "largest total buffer (bytes, up to 256M); sizes double")
      ->transform(ct::app::kPositiveSize);
  app.add_option("--iters", iters, "timed iterations per size");
  app.add_option("--warmup", warmup, "untimed iterations per size");
  app.add_flag("--check", check, "verify every result and report the error count");
  app.add_flag("--json", json, "one JSON object per line instead of the table");
  app.add_flag("--shared", shared, "coretrain side on buffers from Communicator::shm_alloc (zero-copy path)");
  app.add_option("--impl", impls_s, "comma list of coretrain,mpi,gloo");
  app.add_option("--backend", backend_s, "coretrain communicator backend: ccl|mpi|gloo");
  app.add_option("--timeout", timeout_s, "seconds per collective (default CORETRAIN_COMM_TIMEOUT)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const Op op = parse_op(op_name);
  CT_CHECK(dtype_name_s == "f32" || dtype_name_s == "bf16", "--dtype: expected f32|bf16, got '", dtype_name_s,
           "'");
  const DType dt = dtype_name_s == "f32" ? DType::f32 : DType::bf16;
  const int64_t elem = dtype_size(dt);
  CT_CHECK(min_bytes >= 1 && min_bytes <= max_bytes, "--min-bytes ", min_bytes,
           " must be in [1, --max-bytes ", max_bytes, "]");
  CT_CHECK(max_bytes <= (256ll << 20), "--max-bytes ", max_bytes, " exceeds 256 MiB");
  CT_CHECK(iters >= 1 && warmup >= 0, "--iters must be >= 1 and --warmup >= 0, got ", iters, " and ", warmup);
  bool want_ct = false, want_mpi = false, want_gloo = false;
  {
    std::string rest = impls_s + ",";
    for (size_t pos; (pos = rest.find(',')) != std::string::npos; rest.erase(0, pos + 1)) {
      std::string w = rest.substr(0, pos);
      if (w == "coretrain")
        want_ct = true;
      else if (w == "mpi")
        want_mpi = true;
      else if (w == "gloo")
        want_gloo = true;
      else if (!w.empty())
        fail("--impl: expected a comma list of coretrain,mpi,gloo, got '", w, "'");
    }
  }
  CT_CHECK(!shared || want_ct, "--shared applies to the coretrain side; --impl leaves it out");

  CommOptions copts;
  copts.backend = parse_backend(backend_s);
  if (timeout_s > 0) copts.timeout = Timeout(static_cast<int64_t>(timeout_s * 1000));
  auto comm = make_communicator(copts);
  const Timeout timeout = timeout_s > 0 ? copts.timeout : default_timeout();
  const int rank = comm->rank(), n = comm->size();
  const bool mpi = launched_by_mpi();
  if (want_mpi && !mpi && n > 1) {
    if (rank == 0) std::fprintf(stderr, "# plain MPI skipped: not launched by mpiexec\n");
    want_mpi = false;
  }

  // Plain Gloo gets its own store (hosted by rank 0 on a free port, announced through the communicator) so it
  // does not depend on how the Communicator rendezvoused.
  std::unique_ptr<TcpStoreServer> server;
  std::unique_ptr<gloo::rendezvous::Store> gloo_store;
  std::unique_ptr<GlooTransport> gloo;
  std::unique_ptr<GlooBaseline> gloo_base;
  std::unique_ptr<MpiBaseline> mpi_base;
  if (mpi && n > 1) {
    // Wire up every pair of ranks now: MPICH 4.0 over UCX/TCP can deadlock in MPI_Finalize closing endpoints
    // (seen across network namespaces); a full-mesh exchange up front made it rarer, not impossible.
    std::vector<int> out(static_cast<size_t>(n), rank), in(static_cast<size_t>(n));
    MPI_Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, MPI_COMM_WORLD);
  }
  if (want_mpi) mpi_base = std::make_unique<MpiBaseline>(MPI_COMM_WORLD);
  if (want_gloo || (!mpi && n > 1)) {
    float addr[5] = {0, 0, 0, 0, 0};
    std::string host = "127.0.0.1";
    if (n > 1) {
      if (rank == 0) {
        server = std::make_unique<TcpStoreServer>(0);
        const char* master = std::getenv("MASTER_ADDR");
        host = !mpi && master ? local_address_toward(master) : first_ipv4();
        in_addr a{};
        inet_pton(AF_INET, host.c_str(), &a);
        auto* bytes = reinterpret_cast<unsigned char*>(&a);
        for (int i = 0; i < 4; ++i) addr[i] = bytes[i];
        addr[4] = static_cast<float>(server->port());
      }
      BroadcastOptions bo;
      bo.root = 0;
      comm->broadcast(addr, 5, DType::f32, bo);
      host = str(static_cast<int>(addr[0]), ".", static_cast<int>(addr[1]), ".", static_cast<int>(addr[2]),
                 ".", static_cast<int>(addr[3]));
    }
    std::shared_ptr<Store> store = n > 1 ? connect_tcp_store(host, static_cast<int>(addr[4]), timeout)
                                         : std::shared_ptr<Store>(make_memory_store());
    gloo_store = make_gloo_store(store, timeout);
    std::vector<int> ranks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
    GlooTransportOptions gopts;
    gopts.hostname = n > 1 ? local_address_toward(host) : "127.0.0.1";
    gopts.connect_timeout = timeout;
    gloo = std::make_unique<GlooTransport>(*gloo_store, "bench-gloo", ranks, rank, gopts);
    if (want_gloo) gloo_base = std::make_unique<GlooBaseline>(gloo->context(), timeout);
  }
  // Timings and error counts are combined over a channel that is not under test.
  auto combine = [&](double* v, int k, bool max) {
    if (n == 1) return;
    if (mpi) {
      MPI_Allreduce(MPI_IN_PLACE, v, k, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    } else {
      std::vector<float> f(v, v + k);
      gloo->allreduce(f.data(), static_cast<size_t>(k), max ? WireReduce::kMax : WireReduce::kSum, timeout);
      for (int i = 0; i < k; ++i) v[i] = f[static_cast<size_t>(i)];
    }
  };
  auto control_barrier = [&] {
    if (n == 1) return;
    if (mpi)
      MPI_Barrier(MPI_COMM_WORLD);
    else
      gloo->barrier(timeout);
  };

  std::vector<std::unique_ptr<char, decltype(&std::free)>> keep;
  const int64_t max_shape_bytes = max_bytes + 64 * elem * n;
  Buffers plain{aligned_buffer(max_shape_bytes, keep), aligned_buffer(max_shape_bytes, keep)};
  std::vector<Impl> impls;
  if (want_ct) {
    Buffers b = plain;
    if (shared) {
      b.send = static_cast<char*>(comm->shm_alloc(max_shape_bytes));
      b.recv = static_cast<char*>(comm->shm_alloc(max_shape_bytes));
      std::memset(b.send, 0, static_cast<size_t>(max_shape_bytes));
      std::memset(b.recv, 0, static_cast<size_t>(max_shape_bytes));
    }
    impls.push_back({"coretrain", b, [&](Op o, const Buffers& x, const Shape& s, DType d) {
                       switch (o) {
                         case Op::allreduce:
                           comm->allreduce(x.send, s.send_count, d);
                           break;
                         case Op::reduce_scatter:
                           comm->reduce_scatter(x.send, x.recv, s.recv_count, d);
                           break;
                         case Op::allgather:
                           comm->allgather(x.send, x.recv, s.send_count, d);
                           break;
                         case Op::alltoall:
                           comm->alltoall(x.send, x.recv, s.send_count / n, d);
                           break;
                         case Op::broadcast:
                           comm->broadcast(x.send, s.send_count, d);
                           break;
                       }
                     }});
  }
  if (mpi_base)
    impls.push_back({"mpi", plain, [&](Op o, const Buffers& x, const Shape& s, DType d) {
                       switch (o) {
                         case Op::allreduce:
                           mpi_base->allreduce(x.send, s.send_count, d);
                           break;
                         case Op::reduce_scatter:
                           mpi_base->reduce_scatter(x.send, x.recv, s.recv_count, d);
                           break;
                         case Op::allgather:
                           mpi_base->allgather(x.send, x.recv, s.send_count, d);
                           break;
                         case Op::alltoall:
                           mpi_base->alltoall(x.send, x.recv, s.send_count / n, d);
                           break;
                         case Op::broadcast:
                           mpi_base->broadcast(x.send, s.send_count, d, 0);
                           break;
                       }
                     }});
  if (gloo_base)
    impls.push_back({"gloo", plain, [&](Op o, const Buffers& x, const Shape& s, DType d) {
                       switch (o) {
                         case Op::allreduce:
                           gloo_base->allreduce(x.send, s.send_count, d);
                           break;
                         case Op::reduce_scatter:
                           gloo_base->reduce_scatter(x.send, x.recv, s.recv_count, d);
                           break;
                         case Op::allgather:
                           gloo_base->allgather(x.send, x.recv, s.send_count, d);
                           break;
                         case Op::alltoall:
                           gloo_base->alltoall(x.send, x.recv, s.send_count / n, d);
                           break;
                         case Op::broadcast:
                           gloo_base->broadcast(x.send, s.send_count, d, 0);
                           break;
                       }
                     }});
  CT_CHECK(!impls.empty(), "--impl: nothing to run");

  if (rank == 0 && !json) {
    std::printf("# coretrain bench comm: op %s, dtype %s, %d ranks (%s), iters %d, warmup %d%s%s\n",
                kOpNames[int(op)], dtype_name(dt), n, comm->describe().c_str(), iters, warmup,
                shared ? ", coretrain on shm buffers" : "", check ? ", checked" : "");
    std::printf("# time_us = mean per op (slowest rank), bandwidths in GB/s (1e9 B/s), busbw factor %.3f\n",
                bus_factor(op, n));
    std::printf("%12s", "bytes");
    for (const auto& im : impls)
      std::printf(" | %-9s %10s %8s %8s %6s", im.name.c_str(), "time_us", "algbw", "busbw", "err");
    if (impls.size() > 1 && impls[0].name == "coretrain")
      for (size_t i = 1; i < impls.size(); ++i) std::printf(" | x%-5s", impls[i].name.c_str());
    std::printf("\n");
  }

  int64_t total_errors = 0;
  for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const Shape s = shape_of(op, bytes, elem, n);
    if (s.send_count == 0 && s.recv_count == 0) continue;
    const int64_t real_bytes = std::max(s.send_count, s.recv_count) * elem;
    std::vector<Result> results(impls.size());
    for (size_t k = 0; k < impls.size(); ++k) {
      Impl& im = impls[k];
      Result& r = results[k];
      fill(im.buf.send, s.send_count, dt, rank);
      for (int w = 0; w < warmup; ++w) im.run(op, im.buf, s, dt);
      control_barrier();
      double seconds = 0;
      int64_t errors = 0;
      if (check) {
        for (int it = 0; it < iters; ++it) {
          fill(im.buf.send, s.send_count, dt, rank);
          if (op != Op::allreduce && op != Op::broadcast)
            std::memset(im.buf.recv, 0xff, static_cast<size_t>(s.recv_count * elem));
          control_barrier();
          auto t0 = Clock::now();
          im.run(op, im.buf, s, dt);
          seconds += std::chrono::duration<double>(Clock::now() - t0).count();
          errors += verify(op, im.buf, s, dt, rank, n);
        }
      } else {
        auto t0 = Clock::now();
        for (int it = 0; it < iters; ++it) im.run(op, im.buf, s, dt);
        seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      double combined[2] = {seconds, static_cast<double>(errors)};
      combine(combined, 1, true);
      combine(combined + 1, 1, false);
      r.time_us = combined[0] / iters * 1e6;
      r.errors = static_cast<int64_t>(combined[1]);
      r.algbw = static_cast<double>(real_bytes) / (r.time_us * 1e-6) / 1e9;
      r.busbw = r.algbw * bus_factor(op, n);
      r.ran = true;
      total_errors += r.errors;
    }
    if (rank != 0) continue;
    if (json) {
      for (size_t k = 0; k < impls.size(); ++k) {
        const Result& r = results[k];
        std::printf(
            "{\"impl\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"bytes\":%lld,\"ranks\":%d,\"time_us\":%.3f,"
            "\"algbw_gbps\":%.4f,\"busbw_gbps\":%.4f,\"errors\":%lld,\"shared\":%s,\"checked\":%s}\n",
            impls[k].name.c_str(), kOpNames[int(op)], dtype_name(dt), static_cast<long long>(real_bytes), n,
            r.time_us, r.algbw, r.busbw, static_cast<long long>(r.errors),
            impls[k].name == "coretrain" && shared ? "true" : "false", check ? "true" : "false");
      }
    } else {
      std::printf("%12lld", static_cast<long long>(real_bytes));
      for (const Result& r : results)
        std::printf(" | %-9s %10.2f %8.3f %8.3f %6s", "", r.time_us, r.algbw, r.busbw,
                    check ? std::to_string(r.errors).c_str() : "-");
      if (impls.size() > 1 && impls[0].name == "coretrain")
        for (size_t k = 1; k < impls.size(); ++k)
          std::printf(" | %6.2f", results[0].busbw / results[k].busbw);
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  if (rank == 0 && !json && check)
    std::printf("# total errors: %lld\n", static_cast<long long>(total_errors));
  control_barrier();
  // Tear down in order and meet once more right before MPI_Finalize (run at exit by the bootstrap): MPICH 4.0
  // over UCX/TCP can deadlock in MPI_Finalize when ranks reach it far apart (seen across network namespaces).
  // Across nodes (network namespaces) even that is not enough: one rank can spin forever in UCX closing its
  // endpoints. The results are printed and every rank has met, so there nothing is left for MPI_Finalize to
  // do that matters: leave without it (Hydra accepts that and passes our exit code on).
  const bool skip_finalize = mpi && n > 1 && comm->num_nodes() > 1;
  impls.clear();
  gloo_base.reset();
  gloo.reset();
  gloo_store.reset();
  server.reset();
  mpi_base.reset();
  comm.reset();
  if (mpi && n > 1) timed_mpi_barrier(timeout, "the end of bench comm");
  if (skip_finalize) {
    if (total_errors != 0 && rank == 0)
      std::fprintf(stderr, "error: bench comm: %lld wrong elements (--check)\n",
                   static_cast<long long>(total_errors));
    std::fflush(nullptr);
    std::_Exit(total_errors == 0 ? 0 : 1);
  }
  CT_CHECK(total_errors == 0, "bench comm: ", total_errors, " wrong elements (--check)");
  return 0;
}

// STREAM triad a = b + s*c, one process per rank, every rank at once: the memory-bandwidth bound collectives
// face.
int run_bench_triad(int argc, char** argv) {
  CLI::App app{"STREAM-style triad, one process per rank, all ranks at once", "coretrain bench triad"};
  int64_t mib = 128;
  int iters = 10;
  bool json = false;
  app.add_option("--mib", mib, "size of each of the three arrays (MiB)");
  app.add_option("--iters", iters, "repetitions (best is reported)");
  app.add_flag("--json", json, "one JSON object instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  CT_CHECK(mib >= 1 && mib <= 4096, "--mib must be in [1, 4096], got ", mib);
  CT_CHECK(iters >= 1, "--iters must be >= 1, got ", iters);
  const bool mpi = launched_by_mpi();
  int rank = 0, n = 1;
  if (mpi) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
  }
  const size_t count = static_cast<size_t>(mib) << 18;
  std::vector<std::unique_ptr<char, decltype(&std::free)>> keep;
  auto* a = reinterpret_cast<float*>(aligned_buffer(static_cast<int64_t>(count * 4), keep));
  auto* b = reinterpret_cast<float*>(aligned_buffer(static_cast<int64_t>(count * 4), keep));
  auto* c = reinterpret_cast<float*>(aligned_buffer(static_cast<int64_t>(count * 4), keep));
  for (size_t i = 0; i < count; ++i) {
    b[i] = 1.0f + static_cast<float>(i & 7);
    c[i] = 2.0f;
  }
  double best = 1e30;
  for (int it = 0; it < iters; ++it) {
    if (mpi) MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = Clock::now();
    const float s = 3.0f;
#pragma omp simd
    for (size_t i = 0; i < count; ++i) a[i] = b[i] + s * c[i];
    double t = std::chrono::duration<double>(Clock::now() - t0).count();
    if (mpi) MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, t);
  }
  CT_CHECK(a[count - 1] == b[count - 1] + 3.0f * c[count - 1], "triad: wrong result");
  // STREAM counts 3 arrays moved per element (write-allocate traffic not counted).
  const double per_rank = 3.0 * 4.0 * static_cast<double>(count) / best / 1e9;
  if (rank == 0) {
    if (json)
      std::printf(
          "{\"bench\":\"triad\",\"ranks\":%d,\"mib\":%lld,\"per_rank_gbps\":%.3f,\"total_gbps\":%.3f}\n", n,
          static_cast<long long>(mib), per_rank, per_rank * n);
    else
      std::printf(
          "triad: %d process(es) at once, 3 x %lld MiB f32 each: %.2f GB/s per process, %.2f GB/s total\n", n,
          static_cast<long long>(mib), per_rank, per_rank * n);
  }
  if (mpi) MPI_Finalize();
  return 0;
}

}  // namespace

CT_COMMAND("bench comm", "collectives vs plain MPI and Gloo (nccl-tests style)", run_bench_comm);
CT_COMMAND("bench triad", "STREAM-style memory bandwidth, one process per rank", run_bench_triad);
