// Preload for `BENCH_CPU_PROFILE=<dir> npm run bench:api`: the same V8 sampling profiler as
// `node --cpu-prof`, but started and stopped by the bench over the IPC channel so that boot and
// warm-up stay out of the profile and no signal reaches Nest's shutdown hooks (they listen to
// SIGUSR2 and SIGTERM, and a process that dies by a signal never writes --cpu-prof output).
'use strict';
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

const file = process.env.CPU_PROFILE_FILE;
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });

// The sampler counts wall time while the thread is in a call, also when the OS has preempted it
// (on a busy machine, mostly inside writev to Postgres); the process's CPU time shows the gap.
let cpuAtStart;
process.on('message', (message) => {
  if (message === 'start-profile') {
    cpuAtStart = process.cpuUsage();
    session.post('Profiler.start');
  } else if (message === 'stop-profile') {
    session.post('Profiler.stop', (error, result) => {
      const cpu = process.cpuUsage(cpuAtStart);
      if (!error) writeFileSync(file, JSON.stringify({ ...result.profile, processCpuMicros: cpu.user + cpu.system }));
      process.exit(error ? 1 : 0);
    });
  }
});
