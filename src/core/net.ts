/** Whether `host` binds loopback only: 127.0.0.0/8, ::1 (bracketed or not), its IPv4-mapped form, or localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(\.\d{1,3}){3}$/.test(bare);
}
