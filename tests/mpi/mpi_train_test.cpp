// mpi_train_test.cpp - `mpirun -np N megacluster train` against the same command in one process (the
// reference: the in-process lab, itself tested against one worker). Registered only when the build found
// MPI; the environment Open MPI needs as root is set on these tests' own mpirun command lines (mpirun()).
//
// Sections:
//   running commands
//   the same numbers as one process: 2, 4 and 8 ranks, dp x tp x pp, ZeRO-1/2/3
//   wrong rank counts and MPI's native collectives
//   checkpoints across process counts, shards
//   gang failure: SIGKILL one rank, the others stop naming it, --resume finishes the same run;
//           a hung rank (SIGSTOP) stops the gang after --mpi-timeout
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// ---- running commands ----

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path scratch_root() { return fs::temp_directory_path() / ("mc_mpi_test_" + std::to_string(getpid())); }

// Removes this run's scratch folders when the tests end.
struct CleanUp : ::testing::Environment {
  void TearDown() override { fs::remove_all(scratch_root()); }
};
const auto* const clean_up = ::testing::AddGlobalTestEnvironment(new CleanUp);

fs::path scratch(const std::string& name) {
  fs::path d = scratch_root() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Result run(const std::string& args, const fs::path& dir) {
  const std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();
  const int st = std::system((args + " > " + out + " 2> " + err).c_str());
  return Result{WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(out), slurp(err)};
}

std::string cli() { return MC_CLI; }
// Open MPI refuses root unless both variables are set: set here, for the harness's own mpirun only.
// --oversubscribe: more ranks than this machine's cores.
// In the sanitizer build the ranks run without LeakSanitizer: Open MPI 4.1 keeps allocations of its
// dlopened components (ompi_op_base_op_select, pmix) to exit, reported from "<unknown module>" frames that
// no suppression can name. The engine's own leaks are still caught by the in-process tests.
std::string mpirun(int n) {
  std::string env = "env ";
  if (getuid() == 0) env += "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  const char* asan = std::getenv("ASAN_OPTIONS");
  env += "ASAN_OPTIONS=" + std::string(asan && *asan ? std::string(asan) + ":" : "") + "detect_leaks=0 ";
  return env + MC_MPIEXEC + " --oversubscribe -np " + std::to_string(n) + " " + cli();
}

json parse(const Result& r) {
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\nstdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err;
    return json::object();
  }
}

// The keys that must be equal bit for bit (everything but timings and the transport's own report).
json numbers(const json& j) {
  json out;
  for (const char* k : {"losses", "bytes_sent_per_worker", "messages_sent_per_worker", "control_bytes_per_worker",
                        "links_last_step", "memory_per_worker", "predicted_bytes_per_worker", "parameters"})
    out[k] = j.value(k, json());
  return out;
}

// ---- the same numbers as one process: 2, 4 and 8 ranks, dp x tp x pp, ZeRO-1/2/3 ----

struct Layout {
  int ranks;
  const char* args;
};
void PrintTo(const Layout& l, std::ostream* os) { *os << "mpirun -np " << l.ranks << " train " << l.args; }

class SameAsOneProcess : public ::testing::TestWithParam<Layout> {};

TEST_P(SameAsOneProcess, LossesBytesAndMemoryEqualBitForBit) {
  const Layout l = GetParam();
  const fs::path dir = scratch("same");
  const std::string common = std::string(" train ") + l.args + " --steps 4 --json --quiet";
  const Result ref = run(cli() + common, dir);
  ASSERT_EQ(ref.rc, 0) << ref.err;
  const Result mpi = run(mpirun(l.ranks) + common, dir);
  ASSERT_EQ(mpi.rc, 0) << mpi.err;
  const json a = parse(ref), b = parse(mpi);
  EXPECT_EQ(b.value("transport", ""), "mpi");
  EXPECT_EQ(b.value("ranks", 0), l.ranks);
  EXPECT_EQ(a["losses"].size(), 4u);
  // json equality compares the doubles exactly: the loss curve is the in-process one, bit for bit.
  EXPECT_EQ(numbers(a), numbers(b)) << "in-process: " << numbers(a).dump() << "\nmpi: " << numbers(b).dump();
  // What each rank's transport carried is what Comm counted for its worker (data + control).
  for (size_t w = 0; w < b["wire_bytes_per_worker"].size(); ++w)
    EXPECT_EQ(b["wire_bytes_per_worker"][w].get<double>(),
              b["bytes_sent_per_worker"][w].get<double>() + b["control_bytes_per_worker"][w].get<double>())
        << "worker " << w;
}

INSTANTIATE_TEST_SUITE_P(Layouts, SameAsOneProcess,
                         ::testing::Values(Layout{2, "--dp 2"}, Layout{2, "--pp 2"}, Layout{2, "--dp 2 --zero 2"},
                                           Layout{4, "--dp 2 --tp 2"}, Layout{4, "--tp 2 --pp 2 --schedule gpipe"},
                                           Layout{4, "--dp 2 --pp 2 --zero 1"}, Layout{4, "--dp 2 --tp 2 --zero 3"},
                                           Layout{8, "--dp 2 --tp 2 --pp 2"}, Layout{8, "--dp 4 --tp 2 --zero 3"}),
                         [](const ::testing::TestParamInfo<Layout>& i) {
                           std::string n = std::to_string(i.param.ranks) + "ranks";
                           for (const char* c = i.param.args; *c; ++c)
                             if (std::isalnum(static_cast<unsigned char>(*c))) n += *c;
                           return n;
                         });

// ---- wrong rank counts and MPI's native collectives ----

TEST(MpiTrain, WrongRankCountIsRefusedOnceNamingTheFix) {
  const fs::path dir = scratch("wrong");
  const Result r = run(mpirun(3) + " train --dp 2 --tp 2 --steps 2 --json", dir);
  EXPECT_NE(r.rc, 0);
  const std::string what = "mpirun started 3 ranks, but the layout dp 2 x tp 2 x pp 1 has 4 workers";
  const size_t at = r.err.find(what);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(what, at + 1), std::string::npos) << "printed by more than rank 0:\n" << r.err;
  EXPECT_NE(r.err.find("mpirun -np 4"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(MpiTrain, NativeCollectivesCountTheRingAndStayClose) {
  const fs::path dir = scratch("native");
  const std::string common = " train --dp 2 --tp 2 --steps 4 --json --quiet";
  const json a = parse(run(cli() + common, dir));
  const json b = parse(run(mpirun(4) + common + " --mpi-native", dir));
  ASSERT_EQ(b.value("mpi_collectives", ""), "mpi-native");
  EXPECT_EQ(a["bytes_sent_per_worker"], b["bytes_sent_per_worker"]);  // Comm counts the ring it replaces
  ASSERT_EQ(a["losses"].size(), b["losses"].size());
  // MPI chooses its own summation order: equal to float rounding, not bit for bit.
  for (size_t i = 0; i < a["losses"].size(); ++i)
    EXPECT_NEAR(a["losses"][i].get<double>(), b["losses"][i].get<double>(), 1e-4) << "step " << i + 1;
}

// ---- checkpoints across process counts, shards ----

// A run of 8 steps saved at step 4 by `writer`, resumed from step 4 by `reader` (the step-8 file removed),
// finishes with the losses of an uninterrupted run.
void resume_across(const std::string& writer, const std::string& reader, const char* name) {
  const fs::path dir = scratch(name), ck = dir / "ckpt";
  const std::string common = " train --dp 2 --tp 2 --steps 8 --json --quiet";
  const json whole = parse(run(cli() + common, dir));
  const Result w = run(writer + common + " --checkpoint " + ck.string() + " --checkpoint-every 4", dir);
  ASSERT_EQ(w.rc, 0) << w.err;
  ASSERT_TRUE(fs::exists(ck / "ckpt-00000004.mcck"));
  fs::remove(ck / "ckpt-00000008.mcck");
  const Result r = run(reader + common + " --checkpoint " + ck.string() + " --resume", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = parse(r);
  EXPECT_EQ(j.value("resumed_from", ""), (ck / "ckpt-00000004.mcck").string());
  EXPECT_EQ(j.value("steps_run", 0), 4);
  EXPECT_EQ(j["losses"], whole["losses"]);
}

TEST(MpiTrain, CheckpointOfFourRanksResumesInOneProcess) { resume_across(mpirun(4), cli(), "ck41"); }
TEST(MpiTrain, CheckpointOfOneProcessResumesOnFourRanks) { resume_across(cli(), mpirun(4), "ck14"); }

// Each rank writes its shard, rank 0 one manifest; a damaged shard of one rank makes every rank skip that
// checkpoint together; the re-saved step keeps only its new save's shards.
TEST(MpiTrain, EachRankWritesItsShardAndADamagedShardIsSkippedByAll) {
  const fs::path dir = scratch("shards"), ck = dir / "ckpt";
  const std::string common = " train --dp 2 --tp 2 --steps 8 --json --quiet --checkpoint " + ck.string();
  ASSERT_EQ(run(mpirun(4) + common + " --checkpoint-every 4", dir).rc, 0);
  auto files = [&](const std::string& prefix, const std::string& ext) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(ck)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0 && e.path().extension() == ext) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(files("ckpt-", ".mcck"), (std::vector<std::string>{"ckpt-00000004.mcck", "ckpt-00000008.mcck"}));
  EXPECT_EQ(files("ckpt-", ".tmp").size(), 0u);
  const std::vector<std::string> step8 = files("ckpt-00000008.", ".mcsh");
  ASSERT_EQ(step8.size(), 4u);  // one shard per rank
  for (int w = 0; w < 4; ++w)
    EXPECT_NE(step8[size_t(w)].find(".w0000" + std::to_string(w) + ".mcsh"), std::string::npos);
  {  // damage rank 3's shard of step 8
    std::fstream f(ck / step8[3], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const Result r = run(mpirun(4) + common + " --resume", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = parse(r);
  EXPECT_EQ(j.value("resumed_from", ""), (ck / "ckpt-00000004.mcck").string());
  ASSERT_EQ(j["skipped_checkpoints"].size(), 1u) << j.dump();
  EXPECT_NE(j["skipped_checkpoints"][0]["error"].get<std::string>().find(step8[3]), std::string::npos) << j.dump();
  const json whole = parse(run(cli() + " train --dp 2 --tp 2 --steps 8 --json --quiet", dir));
  EXPECT_EQ(j["losses"], whole["losses"]);
  const std::vector<std::string> resaved = files("ckpt-00000008.", ".mcsh");
  EXPECT_EQ(resaved.size(), 4u);
  for (const std::string& n : resaved) EXPECT_EQ(std::find(step8.begin(), step8.end(), n), step8.end()) << n;
}

TEST(MpiTrain, ResumingWithAnotherLayoutIsRefusedNamingWhy) {
  const fs::path dir = scratch("cklayout"), ck = dir / "ckpt";
  ASSERT_EQ(run(mpirun(4) + " train --dp 2 --tp 2 --steps 2 --quiet --json --checkpoint " + ck.string(), dir).rc, 0);
  const Result r = run(mpirun(2) + " train --dp 2 --steps 4 --quiet --json --resume --checkpoint " + ck.string(), dir);
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("tp: checkpoint 2, this run 1"), std::string::npos) << r.err;
}

// ---- gang failure: SIGKILL one rank, the others stop naming it, --resume finishes the same run ----

// The pid of MPI rank `rank` among mpirun's children (its environment says OMPI_COMM_WORLD_RANK).
pid_t rank_pid(pid_t mpirun_pid, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream stat(slurp((e.path() / "stat").string()));
    std::string pid, comm, state;
    long ppid = 0;
    stat >> pid >> comm >> state >> ppid;
    if (ppid != mpirun_pid) continue;
    std::string env = slurp((e.path() / "environ").string());
    for (char& c : env)
      if (c == '\0') c = '\n';
    if (env.find("\nOMPI_COMM_WORLD_RANK=" + std::to_string(rank) + "\n") != std::string::npos)
      return pid_t(std::stol(name));
  }
  return -1;
}

TEST(MpiTrain, KilledRankStopsTheGangNamingItAndResumeFinishesTheSameRun) {
  const fs::path dir = scratch("gang"), ck = dir / "ckpt";
  // A small model so that 160 steps take a few seconds (the kill lands near step 20, with 140 to go); a
  // checkpoint every 10 steps.
  {
    std::ofstream cfg(dir / "small.json");
    cfg << R"({"model": {"layers": 1, "width": 32, "heads": 2, "context": 32}, "batch": 8, "steps": 160})";
  }
  const std::string common = " train " + (dir / "small.json").string() + " --dp 2 --tp 2 --json --quiet --checkpoint " +
                             ck.string() + " --checkpoint-every 10";
  const std::string out = (dir / "killed.out").string(), err = (dir / "killed.err").string();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string cmd = "exec " + mpirun(4) + common + " > " + out + " 2> " + err;
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the checkpoint of step 20, then SIGKILL rank 2 mid-run.
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (!fs::exists(ck / "ckpt-00000020.mcck") && since() < 60)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(ck / "ckpt-00000020.mcck")) << slurp(err);
  const pid_t victim = rank_pid(child, 2);
  ASSERT_GT(victim, 0) << "rank 2 not found among mpirun's children";
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto killed_at = since();
  // Every other rank stops within a few seconds (never hangs in a collective).
  int st = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &st, WNOHANG)) == 0 && since() - killed_at < 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &st, 0);
    FAIL() << "the gang did not stop within 20 s of the kill:\n" << slurp(err);
  }
  const double stop_s = since() - killed_at;
  EXPECT_LT(stop_s, 10.0);
  EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "mpirun reported success after a rank was killed";
  const std::string e = slurp(err);
  // Each survivor names the dead rank and the last checkpoint that is on disk.
  for (int r : {0, 1, 3}) {
    const std::string who = "rank " + std::to_string(r) + " of 4: stopped by mpirun";
    const size_t at = e.find(who);
    ASSERT_NE(at, std::string::npos) << "no message from rank " << r << ":\n" << e;
    const std::string line = e.substr(at, e.find('\n', at) - at);
    EXPECT_NE(line.find("the gang lost rank 2 (pid " + std::to_string(victim) + ")"), std::string::npos) << line;
    const size_t c = line.find("Last sound checkpoint: ");
    ASSERT_NE(c, std::string::npos) << line;
    const std::string path = line.substr(c + 23, line.find(". Restart", c) - c - 23);
    EXPECT_TRUE(fs::exists(path)) << line;
  }
  std::printf("[ gang ] rank 2 killed at %.2f s; the gang stopped %.2f s later\n", killed_at, stop_s);

  // --resume on 4 ranks finishes the run; its losses equal an uninterrupted run's.
  const Result resumed = run(mpirun(4) + common + " --resume", dir);
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  const json j = parse(resumed);
  EXPECT_NE(j.value("resumed_from", ""), "");
  const Result whole = run(cli() + " train " + (dir / "small.json").string() + " --dp 2 --tp 2 --json --quiet", dir);
  ASSERT_EQ(whole.rc, 0) << whole.err;
  const json w = parse(whole);
  ASSERT_EQ(j["losses"].size(), 160u);
  EXPECT_EQ(j["losses"], w["losses"]);
  std::printf("[ gang ] resumed from %s; 160 losses equal the uninterrupted run's (last %.6f)\n",
              j.value("resumed_from", "").c_str(), j["losses"].back().get<double>());
}

// A rank that hangs (SIGSTOP: alive, but silent) is what the heartbeat is for: the ranks waiting on it
// stop the gang after --mpi-timeout seconds, naming a rank they waited on and the last sound checkpoint.
TEST(MpiTrain, HungRankStopsTheGangAfterTheTimeout) {
  const fs::path dir = scratch("hang"), ck = dir / "ckpt";
  {
    std::ofstream cfg(dir / "small.json");
    cfg << R"({"model": {"layers": 1, "width": 32, "heads": 2, "context": 32}, "batch": 8, "steps": 100000})";
  }
  const std::string err = (dir / "hung.err").string();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string cmd = "exec " + mpirun(4) + " train " + (dir / "small.json").string() +
                            " --dp 2 --tp 2 --quiet --mpi-timeout 3 --checkpoint " + ck.string() +
                            " --checkpoint-every 10 > /dev/null 2> " + err;
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (!fs::exists(ck / "ckpt-00000010.mcck") && since() < 60)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(ck / "ckpt-00000010.mcck")) << slurp(err);
  const pid_t victim = rank_pid(child, 2);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  const double stopped_at = since();
  int st = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &st, WNOHANG)) == 0 && since() - stopped_at < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(victim, SIGKILL);
    kill(child, SIGKILL);
    waitpid(child, &st, 0);
    FAIL() << "the gang hung for 30 s behind a stopped rank:\n" << slurp(err);
  }
  const double stop_s = since() - stopped_at;
  EXPECT_GT(stop_s, 2.5);  // not before the timeout
  EXPECT_LT(stop_s, 15.0);
  const std::string e = slurp(err);
  EXPECT_NE(e.find("that rank has died or hangs (--mpi-timeout sets the limit) (rank "), std::string::npos) << e;
  EXPECT_NE(e.find("Last sound checkpoint: " + ck.string() + "/ckpt-000000"), std::string::npos) << e;
  std::printf("[ hang ] rank 2 stopped (SIGSTOP); the gang ended %.2f s later\n", stop_s);
}

}  // namespace
