//! Stopping a loopback server for good: the signal that handlers waiting on purpose (a stall, a
//! delay) select on, and connections that break as soon as it is given, so that a request held
//! open never keeps a server, or the process, alive and never gets an answer after the stop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A one-way signal: once stopped, stopped for good.
#[derive(Clone)]
pub struct Shutdown {
    // The sender lives as long as any clone, so `stopped` never sees a closed channel.
    sender: Arc<watch::Sender<bool>>,
}

impl Shutdown {
    pub fn new() -> Self {
        Self { sender: Arc::new(watch::Sender::new(false)) }
    }

    pub fn stop(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.sender.borrow()
    }

    /// Completes once [`Shutdown::stop`] was called, at once if it already was.
    pub async fn stopped(&self) {
        let mut receiver = self.sender.subscribe();
        // An error means every sender is gone, which `self` rules out; either way it is over.
        let _ = receiver.wait_for(|stopped| *stopped).await;
    }
}

/// A TCP listener whose connections break at the stop.
pub struct StoppableListener {
    inner: TcpListener,
    shutdown: Shutdown,
}

impl StoppableListener {
    pub fn new(inner: TcpListener, shutdown: Shutdown) -> Self {
        Self { inner, shutdown }
    }
}

impl axum::serve::Listener for StoppableListener {
    type Io = StoppableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // Axum's own accept retries what can be retried.
        let (stream, address) = axum::serve::Listener::accept(&mut self.inner).await;
        (StoppableStream::new(stream, self.shutdown.clone()), address)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connection that fails every read and write once the server stops. Hyper reads from a
/// connection even while its handler is pending (to notice a client leaving), so the failure
/// reaches a stalled request at once: the connection is dropped with its handler, and the client
/// sees it closed without an answer.
pub struct StoppableStream {
    inner: TcpStream,
    shutdown: Shutdown,
    /// Wakes the connection at the stop; `None` once it completed (a finished future must not be
    /// polled).
    wake: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl StoppableStream {
    fn new(inner: TcpStream, shutdown: Shutdown) -> Self {
        let waiting = shutdown.clone();
        Self { inner, shutdown, wake: Some(Box::pin(async move { waiting.stopped().await })) }
    }

    /// Whether the server stopped; if not, `context` is woken when it does. The flag decides, not
    /// the future: tokio's cooperative budget can make a watch future pending when the value has
    /// already changed, and a write let through then would answer a stalled request.
    fn stopped(&mut self, context: &mut Context<'_>) -> bool {
        if let Some(wake) = self.wake.as_mut()
            && wake.as_mut().poll(context).is_ready()
        {
            self.wake = None;
        }
        self.shutdown.is_stopped()
    }
}

fn stopped_error() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "the loopback server stopped")
}

impl AsyncRead for StoppableStream {
    fn poll_read(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.stopped(context) {
            return Poll::Ready(Err(stopped_error()));
        }
        Pin::new(&mut this.inner).poll_read(context, buffer)
    }
}

impl AsyncWrite for StoppableStream {
    fn poll_write(self: Pin<&mut Self>, context: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.stopped(context) {
            return Poll::Ready(Err(stopped_error()));
        }
        Pin::new(&mut this.inner).poll_write(context, bytes)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.stopped(context) {
            return Poll::Ready(Err(stopped_error()));
        }
        Pin::new(&mut this.inner).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.stopped(context) {
            return Poll::Ready(Err(stopped_error()));
        }
        Pin::new(&mut this.inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }
}
