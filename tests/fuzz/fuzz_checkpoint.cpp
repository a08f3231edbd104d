// fuzz_checkpoint.cpp - libFuzzer harness of the training lab's checkpoints (engine/train/storage/checkpoint.cpp):
// the input is a checkpoint file, loaded into two small trainers (a plain one and a ZeRO-3 one, so that
// both layouts of the file are reached). The harness writes the correct checksum over the input first
// (the last 8 bytes): otherwise almost every mutation would stop at the checksum and the header and
// arrays behind it would never be read. The checksum check itself is covered by the unit tests.
// Seeds: MC_FUZZ_WRITE_SEEDS=DIR makes the harness write one real checkpoint of each trainer to DIR
// (scripts/fuzz.sh does this at run time; no binary file is committed).
// Invariant: a load either refuses with a message or succeeds, and after a refusal the trainer still steps.
#include "fuzz_common.h"
#include "train/train.h"

#include <cstring>
#include <filesystem>

namespace {

mc::train::TrainConfig config(int which) {
  mc::train::TrainConfig c;
  c.model = {.vocab = 256, .context = 8, .layers = 1, .width = 8, .heads = 2};
  c.batch = 2;
  c.steps = 4;
  c.device = "cpu";
  if (which == 1) c.parallel.dp = 2, c.parallel.zero = 3;
  return c;
}

const std::string& corpus() {
  static const std::string text = mc::train::default_corpus().substr(0, 4096);
  return text;
}

uint64_t fnv1a(const uint8_t* p, size_t n) {  // the checkpoint's checksum (checkpoint.cpp)
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

// libFuzzer calls this once before the first input (in the regression test nothing calls it).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("MC_FUZZ_WRITE_SEEDS")) {
    for (int which = 0; which < 2; ++which) {
      const std::string sub = std::string(dir) + "/w" + std::to_string(which);
      std::filesystem::create_directories(sub);
      mc::train::Trainer t(config(which), corpus());
      t.step();
      t.step();
      const std::string path = t.save_checkpoint(sub);
      std::filesystem::copy_file(path, std::string(dir) + "/ckpt-" + std::to_string(which) + ".mcck",
                                 std::filesystem::copy_options::overwrite_existing);
      std::filesystem::remove_all(sub);
    }
  }
  return 0;
}

MC_FUZZ_TARGET(checkpoint) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size >= 36) {
    const uint64_t sum = fnv1a(data, size - 8);
    std::memcpy(bytes.data() + size - 8, &sum, 8);
  }
  const std::string path =
      mc::fuzz::scratch_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), ".mcck");
  for (int which = 0; which < 2; ++which) {
    mc::train::Trainer t(config(which), corpus());
    bool refused = true;
    mc::fuzz::expect_refusal_or_success("load_checkpoint", [&] {
      t.load_checkpoint(path);
      refused = false;
    });
    if (refused && t.step_index() != 0) mc::fuzz::finding("a refused checkpoint changed the trainer");
    if (!refused && t.step_index() >= t.config().steps) continue;  // a finished run: nothing left to step
    mc::fuzz::expect_refusal_or_success("step after load", [&] { (void)t.step(); });
  }
  return 0;
}
