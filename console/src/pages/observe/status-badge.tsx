export function StatusBadge({ status }: { status: number }) {
  const ok = status < 400;
  return (
    <span class={`badge ${ok ? "badge-ok" : "badge-error"}`} title={ok ? "Succeeded" : "Failed"}>
      {status}
    </span>
  );
}
