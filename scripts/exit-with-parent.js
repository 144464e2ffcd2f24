/*
 * Preloaded (`node --require`) into each app `npm start` / `npm run demo` runs. The apps sit in process groups of
 * their own (so a Ctrl-C reaches the start script alone, which stops them in order), which also means a signal to the
 * script's group does not reach them: should the script die without stopping them (SIGKILL, a closed terminal, a test
 * harness killing its group), the IPC channel it opened closes, and the app stops itself as the whole stack stopping
 * does (SIGINT: the gateway closes its sessions at once, no drain).
 */
if (process.channel) {
  // the channel must not keep the app alive by itself, nor carry anything: it is only a sign of the parent's life
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGINT'));
}
