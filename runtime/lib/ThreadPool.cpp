//===- ThreadPool.cpp - the runtime's worker threads ----------------------===//

#include "ThreadPool.h"

using namespace ffn_rt;

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  start.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::chunk(int64_t units, unsigned parts, unsigned i,
                       int64_t &begin, int64_t &end) {
  int64_t per = units / parts, extra = units % parts;
  begin = i * per + std::min<int64_t>(i, extra);
  end = begin + per + (static_cast<int64_t>(i) < extra ? 1 : 0);
}

void ThreadPool::parallelFor(int64_t count,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (workers.empty() || count <= 1) {
    if (count > 0)
      fn(0, count);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    units = count;
    body = &fn;
    pending = static_cast<unsigned>(workers.size());
    ++generation;
  }
  start.notify_all();
  int64_t begin, end;
  chunk(count, size(), 0, begin, end);
  if (begin < end)
    fn(begin, end);
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [this] { return pending == 0; });
  body = nullptr;
}

void ThreadPool::workerLoop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)> *fn;
    int64_t count;
    {
      std::unique_lock<std::mutex> lock(mutex);
      start.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      fn = body;
      count = units;
    }
    int64_t begin, end;
    chunk(count, size(), index, begin, end);
    if (begin < end)
      (*fn)(begin, end);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (--pending == 0)
        done.notify_one();
    }
  }
}
