//! Breaking connections on purpose: the one-way signal that handlers waiting on purpose (a stall,
//! a delay, a hang) select on, and connections that break as soon as any of their signals is
//! given (the server's stop, the end of the listening period a `refuse` mode ends, or their own
//! reset), so that a request held open never keeps a server, or the process, alive and never
//! gets an answer after the break.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
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

/// One signal a connection breaks at, with the future that wakes the connection when it is given.
struct Signal {
    shutdown: Shutdown,
    /// `None` once it completed (a finished future must not be polled).
    wake: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Signal {
    fn new(shutdown: Shutdown) -> Self {
        let waiting = shutdown.clone();
        Self { shutdown, wake: Some(Box::pin(async move { waiting.stopped().await })) }
    }

    /// Whether it was given; if not, `context` is woken when it is. The flag decides, not the
    /// future: tokio's cooperative budget can make a watch future pending when the value has
    /// already changed, and a write let through then would answer a stalled request.
    fn given(&mut self, context: &mut Context<'_>) -> bool {
        if let Some(wake) = self.wake.as_mut()
            && wake.as_mut().poll(context).is_ready()
        {
            self.wake = None;
        }
        self.shutdown.is_stopped()
    }
}

/// A handle on one connection that a handler uses to reset it: the client gets no answer, only a
/// connection reset. It is the connection's `ConnectInfo`.
#[derive(Clone)]
pub struct Connection {
    reset: Shutdown,
}

impl Connection {
    pub fn reset(&self) {
        self.reset.stop();
    }
}

/// A connection that fails every read and write once one of its signals is given. Hyper reads
/// from a connection even while its handler is pending (to notice a client leaving), so the
/// failure reaches a stalled request at once: the connection is dropped with its handler, and the
/// client sees it closed without an answer (reset, for a [`Connection::reset`]).
pub struct StoppableStream {
    inner: TcpStream,
    breaks: Vec<Signal>,
    reset: Signal,
}

impl StoppableStream {
    /// A connection that breaks when any of `breaks` is given, or at its own reset.
    pub fn new(inner: TcpStream, breaks: Vec<Shutdown>) -> Self {
        Self { inner, breaks: breaks.into_iter().map(Signal::new).collect(), reset: Signal::new(Shutdown::new()) }
    }

    /// The handle that resets this connection.
    pub fn connection(&self) -> Connection {
        Connection { reset: self.reset.shutdown.clone() }
    }

    /// The error to fail with, once broken; every signal is polled so that each one wakes it.
    fn broken(&mut self, context: &mut Context<'_>) -> Option<io::Error> {
        let mut stopped = false;
        for signal in &mut self.breaks {
            stopped |= signal.given(context);
        }
        if self.reset.given(context) {
            // An abortive close: dropping the socket sends RST instead of FIN, so the client sees
            // a reset rather than an orderly end. Failing to set it still closes the connection.
            let _ = self.inner.set_zero_linger();
            return Some(io::Error::new(io::ErrorKind::ConnectionReset, "the loopback server reset the connection"));
        }
        stopped.then(|| io::Error::new(io::ErrorKind::ConnectionAborted, "the loopback server stopped"))
    }
}

impl AsyncRead for StoppableStream {
    fn poll_read(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(error) = this.broken(context) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.inner).poll_read(context, buffer)
    }
}

impl AsyncWrite for StoppableStream {
    fn poll_write(self: Pin<&mut Self>, context: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(error) = this.broken(context) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.inner).poll_write(context, bytes)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(error) = this.broken(context) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.inner).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(error) = this.broken(context) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }
}
